import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openaiModel } from "../../src/engine/model/openai";

const ask = { messages: [{ role: "user" as const, content: "hi" }], tools: [{ name: "post", description: "post", parameters: { type: "object" } }] };

async function scripted(replies: unknown[], query = ""): Promise<string> {
  const id = `stream-${crypto.randomUUID()}`;
  await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}${query}`, { method: "PUT", body: JSON.stringify(replies) });
  return `${env.FAKE_OPENAI_URL}/scripts/${id}/v1`;
}

/** Whether each request the script took asked for a stream. */
const streamFlags = async (baseURL: string) =>
  ((await (await fetch(baseURL.replace(/\/v1$/, ""))).json()) as { requests: Array<{ stream?: boolean }> }).requests.map((r) => r.stream === true);

describe("openai:* streaming behind onDelta", () => {
  it("passes the text piece by piece and returns the whole answer, tool calls and usage put together", async () => {
    const baseURL = await scripted([
      {
        text: "Hel" + "lo",
        chunks: ["Hel", "lo"],
        tool_calls: [{ id: "c1", name: "post", arguments: { a: 1 } }],
        usage: { prompt_tokens: 7, completion_tokens: 3 },
      },
    ]);
    const pieces: string[] = [];
    const res = await openaiModel("m", { baseURL, maxRetries: 0 }).request({ ...ask, onDelta: (t) => pieces.push(t) });
    expect(pieces).toEqual(["Hel", "lo"]);
    expect(res).toEqual({ text: "Hello", toolCalls: [{ id: "c1", name: "post", arguments: '{"a":1}' }], usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it("a compatible server that ignores stream: true and answers JSON is read as a whole answer", async () => {
    // The fake streams only for `stream: true`; a fetch that drops the flag plays a server that ignores it.
    const baseURL = await scripted([{ text: "whole", tool_calls: [{ id: "c2", name: "post", arguments: "{}" }] }]);
    const ignoring: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init!.body));
      delete body.stream;
      return fetch(input, { ...init, body: JSON.stringify(body) });
    };
    const pieces: string[] = [];
    const res = await openaiModel("m", { baseURL, maxRetries: 0, fetch: ignoring }).request({ ...ask, onDelta: (t) => pieces.push(t) });
    expect(res).toMatchObject({ text: "whole", toolCalls: [{ id: "c2", name: "post", arguments: "{}" }] });
    expect(pieces).toEqual([]);
  });
});

describe("openai:* timeout", () => {
  it("a model slower than timeout_ms is asked once (the client's own timeout was retried: the model asked again, and paid, while the first request ran)", async () => {
    let asked = 0;
    // A model that never answers: each request waits until the client gives it up.
    const silent: typeof fetch = (_input, init) => {
      asked++;
      return new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    };
    const model = openaiModel("m", { baseURL: "http://127.0.0.1:9/v1", fetch: silent, timeoutMs: 200 });
    const t0 = Date.now();
    await expect(model.request(ask)).rejects.toThrow(/no answer within 0\.2 s \(timeout_ms\)/);
    expect(asked).toBe(1);
    expect(Date.now() - t0).toBeLessThan(2_000);
  }, 20_000);
});

describe("a provider that refuses streamed requests", () => {
  afterEach(() => vi.restoreAllMocks());
  const refusedLines = (warn: { mock: { calls: unknown[][] } }) => warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("model_stream_refused"));

  it("400 param stream: asked again once without streaming, remembered for the provider (and logged once), each answer marked", async () => {
    const warn = vi.spyOn(console, "warn");
    const baseURL = await scripted([{ text: "whole" }, { text: "again" }, { text: "third" }], "?refuse_stream=1");
    const provider = `refusing-${crypto.randomUUID()}`;
    const pieces: string[] = [];
    const model = openaiModel("m", { baseURL, maxRetries: 0, provider });
    expect(await model.request({ ...ask, onDelta: (t) => pieces.push(t) })).toMatchObject({ text: "whole", streamRefused: true });
    expect(await streamFlags(baseURL)).toEqual([true, false]);
    // The next request of the provider (another model object, as a queue consumer makes) is not streamed at all.
    const again = await openaiModel("m", { baseURL, maxRetries: 0, provider }).request({ ...ask, onDelta: (t) => pieces.push(t) });
    expect(again).toMatchObject({ text: "again", streamRefused: true });
    expect(await streamFlags(baseURL)).toEqual([true, false, false]);
    // Without live text asked for, nothing to refuse: the answer is not marked.
    expect(await model.request(ask)).not.toHaveProperty("streamRefused");
    expect(pieces).toEqual([]);
    // Logged once, naming the provider only (not its URL, which may carry a key).
    expect(refusedLines(warn)).toEqual([JSON.stringify({ edgework: "model_stream_refused", provider })]);
  });

  it("a 400 that says in words that streaming is unsupported is a refusal too", async () => {
    for (const message of ["Streaming is not supported for this model", "This endpoint does not support streaming", "stream=true is unsupported"]) {
      const baseURL = await scripted([{ status: 400, body: { error: { message, type: "invalid_request_error" } } }, { text: "ok" }]);
      const res = await openaiModel("m", { baseURL, maxRetries: 0, provider: `words-${crypto.randomUUID()}` }).request({ ...ask, onDelta: () => {} });
      expect([message, res]).toMatchObject([message, { text: "ok", streamRefused: true }]);
      expect(await streamFlags(baseURL)).toEqual([true, false]);
    }
  });

  it("any other 400 is the request's own: not asked again, and the provider still streams", async () => {
    const provider = `other-${crypto.randomUUID()}`;
    for (const error of [
      { message: "Invalid schema for function 'post'", type: "invalid_request_error", param: "tools" },
      { message: "This model's maximum context length is 8192 tokens; stream responses are not affected", param: null },
    ]) {
      const baseURL = await scripted([{ status: 400, body: { error } }, { text: "never" }]);
      await expect(openaiModel("m", { baseURL, maxRetries: 0, provider }).request({ ...ask, onDelta: () => {} })).rejects.toThrow(/^400 /);
      expect(await streamFlags(baseURL)).toEqual([true]);
    }
    const baseURL = await scripted([{ text: "streamed", chunks: ["stre", "amed"] }]);
    const pieces: string[] = [];
    expect(await openaiModel("m", { baseURL, maxRetries: 0, provider }).request({ ...ask, onDelta: (t) => pieces.push(t) })).not.toHaveProperty(
      "streamRefused",
    );
    expect(pieces).toEqual(["stre", "amed"]);
  });

  it("stream: false never asks for a stream, even with live text asked for; nothing refused, nothing marked", async () => {
    const warn = vi.spyOn(console, "warn");
    const baseURL = await scripted([{ text: "plain" }], "?refuse_stream=1");
    const res = await openaiModel("m", { baseURL, maxRetries: 0, provider: `off-${crypto.randomUUID()}`, stream: false }).request({
      ...ask,
      onDelta: () => {},
    });
    expect(res).toEqual({ text: "plain", toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } });
    expect(await streamFlags(baseURL)).toEqual([false]);
    expect(refusedLines(warn)).toEqual([]);
  });
});
