import { afterEach, describe, expect, it, vi } from "vitest";
import { effectCount, effectUrl, modelRequests, script, stub } from "./helpers";
import { holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

describe("a conversation with a finished run (MODEL_DISPATCH=queue)", () => {
  it("each message's requests go through the queue under keys of their own; the history and the usage are the run's", async () => {
    const held = holdDispatches();
    const post = { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("chat-queued"), method: "POST", body: "x" } }] };
    await script("chat-writer", [{ text: "a1" }, post, { text: "a2" }, { text: "a3" }]);
    const id = "chat-queued";
    await stub(id).start({ id, worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "a1" });
    for (const [n, answer] of [
      [2, "a2"],
      [3, "a3"],
    ] as const) {
      expect(await stub(id).sendMessage(`m${n}`)).toMatchObject({ ok: true, message: n });
      expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: answer });
    }
    const requests = (await modelRequests("chat-writer")) as Array<{ messages: Array<{ role: string; content: string | null }> }>;
    expect(requests).toHaveLength(4);
    expect(requests[3]!.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["m1", "m2", "m3"]);
    expect(await effectCount("chat-queued")).toBe(1);
    expect((await stub(id).status())!).toMatchObject({ usage: { requests: 4, inputTokens: 40, outputTokens: 20 }, call_tree: { turns: 4 } });
  });
});
