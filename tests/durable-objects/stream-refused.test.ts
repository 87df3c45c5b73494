import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectCount, effectUrl, modelRequests, settle, stub } from "./helpers";

afterEach(() => vi.restoreAllMocks());

/** Loads `model`'s script on the fake server, which answers its streamed requests 400 `param: "stream"`. */
async function refusingStreams(model: string, replies: unknown[]): Promise<void> {
  const res = await fetch(`${env.FAKE_OPENAI_URL}/scripts/${model}?refuse_stream=1`, { method: "PUT", body: JSON.stringify(replies) });
  expect(res.ok).toBe(true);
}

const streamFlags = async (model: string) => ((await modelRequests(model)) as Array<{ stream?: boolean }>).map((r) => r.stream === true);
const post = (tag: string) => ({ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST", body: tag } }] });

describe("a provider that refuses streamed requests (MODEL_DISPATCH=direct: the run's object asks, with live text)", () => {
  it("runs complete without live text: the refused request is asked again unstreamed, later ones are not streamed; each turn says so", async () => {
    const warn = vi.spyOn(console, "warn");
    const model = "unstreamed-writer";
    await refusingStreams(model, [post("unstreamed-1"), { text: "done 1" }, { text: "done 2" }]);

    await stub("unstreamed-1").start({ id: "unstreamed-1", worker: model, input: { input: "go" }, approvalMode: "ask", budget: {} });
    expect(await settle("unstreamed-1")).toMatchObject({ status: "succeeded", output: "done 1" });
    // One refused stream, then only whole requests: the provider is remembered for the isolate.
    expect(await streamFlags(model)).toEqual([true, false, false]);
    expect(await effectCount("unstreamed-1")).toBe(1);
    const { events } = (await stub("unstreamed-1").eventsSince())!;
    const turns = events.filter((e) => e.type === "turn").map((e) => e.data);
    expect(turns).toEqual([
      expect.objectContaining({ turn: 1, stream_refused: true }),
      expect.objectContaining({ turn: 2, text: "done 1", stream_refused: true }),
    ]);

    await stub("unstreamed-2").start({ id: "unstreamed-2", worker: model, input: { input: "again" }, approvalMode: "ask", budget: {} });
    expect(await settle("unstreamed-2")).toMatchObject({ status: "succeeded", output: "done 2" });
    expect(await streamFlags(model)).toEqual([true, false, false, false]);
    // Logged once, by the provider's name.
    expect(warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("model_stream_refused"))).toEqual([
      JSON.stringify({ edgework: "model_stream_refused", provider: "unstreaming" }),
    ]);
  });
});
