import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { MemoryJournalStore, scriptedModel, type ScriptedReply } from "../../src/engine";
import { fakeOpenAI, harness, workerFile } from "./helpers";

/** Runs one turn of tool calls through an `http` instance and returns each call's recorded outcome. */
async function callHttp(config: string, calls: NonNullable<ScriptedReply["toolCalls"]>, approval = "") {
  const model = scriptedModel([{ toolCalls: calls.map((c, i) => ({ ...c, id: `h${i}` })) }, { text: "done" }]);
  const h = harness({ "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  web: { use: http, ${config} }${approval}`) }, { models: { "test:m": model } });
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "w", input: { input: "x" } }, store);
  return { out, results: calls.map((_, i) => store.entries.get(`w/turn:1/tool:h${i}/result`) as any) };
}

describe("http kind", () => {
  const origin = () => new URL(env.FAKE_OPENAI_URL);

  it("GETs an allowed host and truncates long responses with a flag", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `http-${crypto.randomUUID()}`, []);
    const url = fake.baseURL.replace(/\/v1$/, "");
    const { results } = await callHttp(`allow: ["127.0.0.1"], max_response_chars: 10`, [{ name: "web_fetch", args: { url } }]);
    expect(results[0]).toMatchObject({ ok: true, value: { status: 200, content_type: "application/json", body: '{"requests', truncated: true } });
  });

  it("refuses any other host without making a request", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    try {
      const { results } = await callHttp(`allow: ["api.github.com"]`, [{ name: "web_fetch", args: { url: `${origin().origin}/x` } }]);
      expect(results[0]).toEqual(expect.objectContaining({ ok: false, error: "host 127.0.0.1 is not allowed; this toolset may reach: api.github.com" }));
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("asks before methods other than GET/HEAD", async () => {
    const { out } = await callHttp(`allow: ["127.0.0.1"]`, [{ name: "web_fetch", args: { url: `${origin().origin}/x`, method: "POST", body: "{}" } }]);
    expect(out).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "web_fetch", args: { method: "POST" } }] });
  });

  it("labels a JSON body as application/json unless the call says otherwise", async () => {
    const sent: Array<string | null> = [];
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (_u, init) => {
      sent.push(new Headers(init?.headers).get("content-type"));
      return new Response("ok");
    });
    try {
      await callHttp(`allow: ["example.com"]`, [
        { name: "web_fetch", args: { url: "https://example.com/a", method: "POST", body: '{"x":1}' } },
        { name: "web_fetch", args: { url: "https://example.com/b", method: "POST", body: "plain text" } },
        { name: "web_fetch", args: { url: "https://example.com/c", method: "POST", body: "{}", headers: { "Content-Type": "text/x-custom" } } },
      ], "\napproval:\n  web_fetch: allow");
      expect(sent.sort()).toEqual(["application/json", "text/x-custom", null].sort());
    } finally {
      spy.mockRestore();
    }
  });

  it("times out with a clear error", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation((_u, init) => new Promise((_r, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))));
    try {
      const { results } = await callHttp(`allow: ["example.com"], timeout_ms: 20`, [{ name: "web_fetch", args: { url: "https://example.com/slow" } }]);
      expect(results[0]).toMatchObject({ ok: false, error: "request to example.com timed out after 20 ms" });
    } finally {
      spy.mockRestore();
    }
  });
});
