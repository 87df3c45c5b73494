import { afterEach, describe, it, vi } from "vitest";
import { holdDispatches, settleQueued } from "./queue-dispatch";
import { approvalWithFallback, askWithFallback } from "./signals";

afterEach(() => vi.restoreAllMocks());

// Issue 19 item 2 in the default mode: a model request handed to the queue ends the activation; code that catches errors must not see that as one.
describe("a function that catches every error never sees a pause or a hand-off (MODEL_DISPATCH=queue)", () => {
  it("around ctx.llmAsk: the hand-off runs no fallback post, the last call gets its own result, evicted before each step", () => {
    const held = holdDispatches();
    return askWithFallback("fnq-fb", (id) => settleQueued(id, held));
  });
  it("around a call that waits for a person: nothing posted while it waits; approved, no fallback", () => {
    const held = holdDispatches();
    return approvalWithFallback("fnq-afb", "approve", (id) => settleQueued(id, held));
  });
  it("around a call that waits for a person: rejected (a real failure), the fallback posts once", () => {
    const held = holdDispatches();
    return approvalWithFallback("fnq-afb", "reject", (id) => settleQueued(id, held));
  });
});
