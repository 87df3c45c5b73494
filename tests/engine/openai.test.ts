import { env } from "cloudflare:workers";
import { VERSION } from "openai/version";
import { describe, expect, it } from "vitest";
import { openaiModel } from "../../src/engine/model/openai";
import { fakeOpenAI, harness, workerFile } from "./helpers";

const worker = workerFile(`
name: reader
model: openai:gpt-4.1-mini
toolsets:
  files: { use: files, readonly: true }`);

describe("openai:* through the official client against an OpenAI-compatible server on 127.0.0.1", () => {
  it("drives a complete tool-calling run: two turns, parallel tool calls", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `two-turns-${crypto.randomUUID()}`, [
      {
        tool_calls: [
          { id: "c1", name: "list_files", arguments: {} },
          { id: "c2", name: "read_file", arguments: { path: "missing.txt" } },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      },
      { text: "nothing there", usage: { prompt_tokens: 150, completion_tokens: 5 } },
    ]);
    const h = harness({ "r.worker": worker }, { openai: { baseURL: fake.baseURL, apiKey: "sk-test" } });
    const out = await h.run({ worker: "reader", input: { input: "what files are there?" } });
    expect(out).toMatchObject({ status: "succeeded", output: "nothing there" });
    expect(out.usage).toEqual({ requests: 2, inputTokens: 250, outputTokens: 25, costUsd: (250 * 0.4 + 25 * 1.6) / 1e6 });

    const [first, second] = await fake.requests();
    expect(first.model).toBe("gpt-4.1-mini");
    expect(first.parallel_tool_calls).toBe(true);
    expect(first.tools.map((t: any) => t.function.name).sort()).toEqual(["list_files", "read_file"]);
    expect(first.messages).toEqual([
      { role: "system", content: "Do the task." },
      { role: "user", content: "what files are there?" },
    ]);
    expect(second.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "list_files", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "read_file", arguments: '{"path":"missing.txt"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "[]" },
      { role: "tool", tool_call_id: "c2", content: "Error: no file at /missing.txt" },
    ]);
  });

  it("sends the client's own User-Agent, not its class's name (which a minified bundle renames); a provider's header wins", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `ua-${crypto.randomUUID()}`, [{ text: "a" }, { text: "b" }]);
    const ask = { messages: [{ role: "user" as const, content: "hi" }], tools: [] };
    await openaiModel("m", { baseURL: fake.baseURL, apiKey: "sk-test" }).request(ask);
    await openaiModel("m", { baseURL: fake.baseURL, apiKey: "sk-test", headers: { "User-Agent": "acme-agent/2" } }).request(ask);
    const seen = (await (await fetch(fake.baseURL.replace(/\/v1$/, ""))).json()) as { headers: Array<Record<string, string>> };
    expect(seen.headers.map((h) => h["user-agent"])).toEqual([`OpenAI/JS ${VERSION}`, "acme-agent/2"]);
  });

  it("retries a 429 and then succeeds", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `rate-${crypto.randomUUID()}`, [
      { status: 429, headers: { "retry-after-ms": "20" }, body: { error: { message: "slow down", type: "rate_limit" } } },
      { text: "after the retry" },
    ]);
    const h = harness({ "r.worker": worker }, { openai: { baseURL: fake.baseURL, apiKey: "sk-test" } });
    expect(await h.run({ worker: "reader", input: { input: "x" } })).toMatchObject({ status: "succeeded", output: "after the retry", usage: { requests: 1 } });
    expect(await fake.requests()).toHaveLength(2);
  });

  it("a model that keeps failing ends the run with a model_error naming the worker and model", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `down-${crypto.randomUUID()}`, [
      { status: 503, headers: { "retry-after-ms": "1" } },
      { status: 503, headers: { "retry-after-ms": "1" } },
    ]);
    const h = harness({ "r.worker": worker }, { openai: { baseURL: fake.baseURL, apiKey: "sk-test", maxRetries: 1 } });
    const out = await h.run({ worker: "reader", input: { input: "x" } });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "model_error", message: expect.stringMatching(/^r\.worker: model openai:gpt-4\.1-mini failed: 503/) },
    });
    expect(await fake.requests()).toHaveLength(2);
  });
});
