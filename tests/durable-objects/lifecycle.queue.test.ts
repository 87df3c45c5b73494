import { afterEach, describe, expect, it, vi } from "vitest";
import { CLAIM_TIMEOUT_MS, dispatchTiming } from "../../durable-objects/model-dispatch";
import { effectCount, effectUrl, script, stub } from "./helpers";
import { expectWoken, landAt } from "./interleave";
import { holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => {
  dispatchTiming.claimTimeoutMs = CLAIM_TIMEOUT_MS;
  vi.restoreAllMocks();
});

describe("MODEL_DISPATCH=queue: a wake-up once requested is never moved later (lifecycle.ts invariant 3)", () => {
  it("a decision landing during a queue-mode activation wakes the run at once, not at the hand-off's lapse", async () => {
    const held = holdDispatches();
    // A lapse far off, so a wake-up moved to it shows.
    dispatchTiming.claimTimeoutMs = 10 * 60_000;
    await script("dispatch-helper", [{ text: "said" }]);
    const id = "lcq-decide";
    await stub(id).start({ id, worker: "fn-gate-and-ask", input: { url: effectUrl(id) }, approvalMode: "ask", budget: {} });
    // The activation asks for the approval, then hands the model request off and ends: the decision lands in between.
    const landed = await landAt(id, { point: "model.hand-off", when: "after" }, async () => {
      const pending = (await stub(id).status())!.approvals.find((a) => a.status === "pending");
      expect(pending, "the approval is asked before the hand-off").toBeDefined();
      return stub(id).decide(pending!.id, { decision: "approve", by: "test" });
    });
    expect(landed).toMatchObject({ reached: true, landed: { ok: true, approved: true } });
    await expectWoken(id, "the decision's wake-up");
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: { said: "said" } });
    expect(await effectCount(id)).toBe(1);
  });
});
