// Issue 28, items 2 and 3, in a run's object: a decision reaches the call it was made
// for when user code runs calls in parallel and the first model answer is slow.
import { describe, expect, it } from "vitest";
import type { ApprovalView } from "../../src/runs/types";
import { effectCount, effectUrl, script, settle, stub } from "./helpers";

const pending = async (id: string) => ((await stub(id).status())!.approvals as ApprovalView[]).filter((a) => a.status === "pending");

describe("parallel ctx calls in a run's object (fn-fan-out)", () => {
  it("a person approves the post of the item whose summary came first; on replay that post is sent, the other is asked about", async () => {
    const id = "fan-out-1";
    await script("fan-slow", [{ text: "slow summary", delay_ms: 400 }]);
    await script("fan-fast", [{ text: "fast summary" }]);
    await stub(id).start({ id, worker: "fn-fan-out", input: { url: effectUrl(id) }, approvalMode: "ask", budget: {} });
    expect(await settle(id)).toMatchObject({ status: "awaiting_approval" });

    // Both posts wait for a person; the fast item's summary came first, so its post is the context's call 3.
    const asked = await pending(id);
    expect(asked.map((a) => [(a.args as { url: string }).url, a.call_path])).toEqual(
      expect.arrayContaining([
        [`${effectUrl(id)}-fast`, "fn-fan-out/call:3"],
        [`${effectUrl(id)}-slow`, "fn-fan-out/call:4"],
      ]),
    );
    const fast = asked.find((a) => (a.args as { url: string }).url.endsWith("-fast"));
    expect(await stub(id).decide(fast!.id, { decision: "approve", by: "a test" })).toMatchObject({ ok: true });

    // The replay hands the recorded summaries back in the order they came: the fast item's post is call 3 again.
    expect(await settle(id)).toMatchObject({ status: "awaiting_approval" });
    expect(await effectCount(`${id}-fast`)).toBe(1);
    expect(await effectCount(`${id}-slow`)).toBe(0);
    const [slow] = await pending(id);
    expect((slow!.args as { url: string }).url).toBe(`${effectUrl(id)}-slow`);

    expect(await stub(id).decide(slow!.id, { decision: "approve", by: "a test" })).toMatchObject({ ok: true });
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    expect([await effectCount(`${id}-fast`), await effectCount(`${id}-slow`)]).toEqual([1, 1]);
  });
});
