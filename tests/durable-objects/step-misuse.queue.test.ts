// Issue 28, item 3, in queue mode: a ctx call inside ctx.step would hand a model request
// off (a signal) from inside the step and leave the step pending for good; it is refused.
import { afterEach, describe, expect, it, vi } from "vitest";
import { stub } from "./helpers";
import { holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

describe("ctx inside ctx.step (MODEL_DISPATCH=queue)", () => {
  it("is refused with an error naming the call and the step: the run fails at once instead of hanging in every activation", async () => {
    const held = holdDispatches();
    const id = "step-misuse-q";
    await stub(id).start({ id, worker: "fn-step-asker", input: {}, approvalMode: "ask", budget: {} });
    const view = await settleQueued(id, held);
    expect(view.status).toBe("failed");
    expect(view.error?.message).toMatch(/ctx\.llmAsk was called inside ctx\.step\("summary"\)/);
    expect(held).toEqual([]); // nothing was handed off
  });
});
