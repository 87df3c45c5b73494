import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openaiModel } from "../../src/engine/model/openai";

const ask = { messages: [{ role: "user" as const, content: "hi" }], tools: [{ name: "post", description: "post", parameters: { type: "object" } }] };

async function scripted(replies: unknown[]): Promise<string> {
  const id = `stream-${crypto.randomUUID()}`;
  await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}`, { method: "PUT", body: JSON.stringify(replies) });
  return `${env.FAKE_OPENAI_URL}/scripts/${id}/v1`;
}

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
