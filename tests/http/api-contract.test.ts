import { expectTypeOf, it } from "vitest";
import type * as z from "zod";
import type { runView } from "../../src/api/run-view";
import type { decisionBody, journalPage, runListItem } from "../../src/api/runs";
import type { DecideParams } from "../../src/client/types";
import type { RunListItem } from "../../src/runs/index-types";
import type { JournalStepView } from "../../src/runs/fork";
import type { RunView } from "../../src/runs/types";

// Checked by `npm run typecheck` (tsc reads these assertions; at run time they are no-ops). The
// routes check each answer against its schema with `satisfies` (the answer's fields are the
// schema's); this checks the other way for the views the server builds in its objects: a field
// added to RunView without its schema (so missing from the OpenAPI document and the client) fails.
it("the views the server builds are the API's schemas, field for field", () => {
  expectTypeOf<RunView>().toEqualTypeOf<z.output<typeof runView>>();
  expectTypeOf<RunListItem>().toEqualTypeOf<z.output<typeof runListItem>>();
  expectTypeOf<JournalStepView>().toEqualTypeOf<z.output<typeof journalPage>["steps"][number]>();
});

it("the client's decisions are bodies the decision route takes", () => {
  expectTypeOf<DecideParams>().toExtend<z.input<typeof decisionBody>>();
});
