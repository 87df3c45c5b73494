import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { script, stub } from "./helpers";
import { consume, holdDispatches } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

describe("the run's timeline (MODEL_DISPATCH=queue)", () => {
  it("a model request handed to the queue spans from its hand-off to the replay that records it, not that replay alone", async () => {
    const held = holdDispatches();
    await script("timeline-helper", [{ text: "helped" }]);
    const id = "timeline-queued";
    await stub(id).start({ id, worker: "timeline-helper", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(env.RUNS.getByName(id)); // hands the request off
    expect(held).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100)); // the queue and the model take their time
    await consume(held.splice(0));
    await runDurableObjectAlarm(env.RUNS.getByName(id)); // records the answer
    const view = (await stub(id).status())!;
    expect(view.status).toBe("succeeded");
    const model = view.timeline.spans.find((s) => s.kind === "model")!;
    expect(model.end - model.start).toBeGreaterThanOrEqual(95);
    expect(view.timeline.totals.model_ms).toBe(model.end - model.start);
  });
});
