import { it } from "vitest";
import { costOfWaits } from "../../tests/durable-objects/waits-cost";
import { report } from "./report";

it("rows written and alarms set per durable wait (sleep, event wait)", async () => {
  report("waits", await costOfWaits("bench"));
});
