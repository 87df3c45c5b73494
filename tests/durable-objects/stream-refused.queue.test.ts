import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectCount, effectUrl, modelRequests, stub } from "./helpers";
import { handOffs, holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

const MODEL = "unstreamed-queue-writer";
const streamFlags = async () => ((await modelRequests(MODEL)) as Array<{ stream?: boolean }>).map((r) => r.stream === true);

describe("a provider that refuses streamed requests (MODEL_DISPATCH=queue: the consumer asks, forwarding live text)", () => {
  it("runs complete without live text: the consumer asks the refused request again unstreamed, and later ones unstreamed; each turn says so", async () => {
    const tag = "unstreamed-queue";
    const replies = [
      { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST", body: tag } }] },
      { text: "done 1" },
      { text: "done 2" },
    ];
    const loaded = await fetch(`${env.FAKE_OPENAI_URL}/scripts/${MODEL}?refuse_stream=1`, { method: "PUT", body: JSON.stringify(replies) });
    expect(loaded.ok).toBe(true);
    const held = holdDispatches();

    await stub("unstreamed-q1").start({ id: "unstreamed-q1", worker: MODEL, input: { input: "go" }, approvalMode: "ask", budget: {} });
    expect(await settleQueued("unstreamed-q1", held)).toMatchObject({ status: "succeeded", output: "done 1" });
    // Both answers came through the queue (each hand-off answered), not from the object itself.
    expect((await handOffs("unstreamed-q1")).map((h) => h.answer !== null)).toEqual([true, true]);
    expect(await streamFlags()).toEqual([true, false, false]);
    expect(await effectCount(tag)).toBe(1);
    const { events } = (await stub("unstreamed-q1").eventsSince())!;
    expect(events.filter((e) => e.type === "turn").map((e) => e.data.stream_refused)).toEqual([true, true]);

    await stub("unstreamed-q2").start({ id: "unstreamed-q2", worker: MODEL, input: { input: "again" }, approvalMode: "ask", budget: {} });
    expect(await settleQueued("unstreamed-q2", held)).toMatchObject({ status: "succeeded", output: "done 2" });
    expect(await streamFlags()).toEqual([true, false, false, false]);
  });
});
