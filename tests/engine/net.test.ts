import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, executeRun, MemoryJournalStore, scriptedModel, tool, ToolError } from "../../src/engine";
import { idempotencyKey, sha256Hex } from "../../src/engine/run/idempotency-key";
import { allowEntryProblem, allowList } from "../../src/engine/net/allow-list";
import { guardedFetch } from "../../src/engine/net/guarded-fetch";
import { cappedText, readBodyCapped } from "../../src/engine/net/read-body";
import { harness, workerFile } from "./helpers";

describe("allowList", () => {
  const allows = (entries: string[], url: string) => allowList(entries).allows(new URL(url));

  it("without a port allows only the scheme's default port; with one, exactly that port", () => {
    expect(allows(["example.com"], "https://example.com/x")).toBe(true);
    expect(allows(["example.com"], "http://example.com/x")).toBe(true);
    expect(allows(["example.com"], "https://example.com:8443/x")).toBe(false);
    expect(allows(["example.com"], "https://example.com:80/x")).toBe(false);
    expect(allows(["example.com:8443"], "https://example.com:8443/x")).toBe(true);
    expect(allows(["example.com:8443"], "https://example.com/x")).toBe(false);
    expect(allows(["example.com:443"], "http://example.com:443/")).toBe(true);
    expect(allows(["[::1]:8080"], "http://[::1]:8080/")).toBe(true);
    expect(allows(["[::1]"], "http://[::1]:8080/")).toBe(false);
  });

  it("matches names as URLs normalize them, and *. only for subdomains", () => {
    expect(allows(["API.Example.COM"], "https://api.example.com/")).toBe(true);
    expect(allows(["127.0.0.1:9"], "http://127.1:9/")).toBe(true);
    expect(allows(["*.example.com"], "https://a.b.example.com/")).toBe(true);
    expect(allows(["*.example.com"], "https://example.com/")).toBe(false);
    expect(allows(["*.example.com"], "https://badexample.com/")).toBe(false);
    expect(allows(["*.example.com"], "https://example.com.evil.net/")).toBe(false);
    expect(allows(["example.com"], "ftp://example.com/")).toBe(false);
  });

  it("says what is wrong with an unusable entry", () => {
    expect(allowEntryProblem("example.com:8443")).toBeUndefined();
    expect(allowEntryProblem("a*.example.com")).toMatch(/only allowed as a leading "\*\."/);
    expect(allowEntryProblem("https://example.com")).toMatch(/not a URL/);
    expect(allowEntryProblem("example.com:0")).toMatch(/port "0"/);
  });
});

describe("guardedFetch", () => {
  const host = new URL(env.FAKE_UPSTREAM_A).host;

  it("is fetch-compatible: takes a Request, returns the Response with finalUrl", async () => {
    const id = crypto.randomUUID();
    const f = guardedFetch({ allow: allowList([host]), headers: { "X-Config": "c" } });
    const res = await f(new Request(`${env.FAKE_UPSTREAM_A}/${id}/echo`, { method: "PUT", body: "hi", headers: { "X-Own": "o" } }));
    expect(res.finalUrl).toBe(`${env.FAKE_UPSTREAM_A}/${id}/echo`);
    expect(await res.json()).toMatchObject({ method: "PUT", body: "hi", headers: { "x-config": "c", "x-own": "o" } });
  });

  it("checks the first request too, with an error a model can read", async () => {
    const f = guardedFetch({ allow: allowList(["example.com"]) });
    await expect(f(`${env.FAKE_UPSTREAM_A}/x`)).rejects.toBeInstanceOf(ToolError);
    await expect(f("file:///etc/passwd")).rejects.toThrow("only http(s) URLs are allowed, not file:");
  });

  it("httpsOnly refuses a redirect from https down to plain http on the same host, sending nothing there", async () => {
    const sent: string[] = [];
    const fake = async (input: string | URL | Request) => {
      const url = String(input instanceof Request ? input.url : input);
      sent.push(url);
      return url.startsWith("https:") ? new Response(null, { status: 307, headers: { location: "http://mcp.example.com/mcp" } }) : new Response("{}");
    };
    const f = guardedFetch({ allow: allowList(["mcp.example.com"]), httpsOnly: true, fetch: fake as typeof fetch });
    await expect(f("https://mcp.example.com/mcp", { method: "POST", body: "{}" })).rejects.toThrow(
      "redirect 1 to http://mcp.example.com/mcp refused: only https is allowed here",
    );
    expect(sent).toEqual(["https://mcp.example.com/mcp"]);
  });
});

describe("readBodyCapped", () => {
  it("reads up to the cap and says whether more was there", async () => {
    expect(cappedText(await readBodyCapped(new Response("hello"), 5))).toBe("hello");
    expect(await readBodyCapped(new Response("hello"), 5)).toMatchObject({ truncated: false });
    expect(await readBodyCapped(new Response("hello!"), 5)).toMatchObject({ truncated: true });
    expect(await readBodyCapped(new Response(null), 5)).toMatchObject({ truncated: false, bytes: new Uint8Array(0) });
  });

  it("cancels the stream once past the cap", async () => {
    let cancelled = false;
    let pulls = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull: (c) => void (pulls++, c.enqueue(new Uint8Array(1024))),
      cancel: () => void (cancelled = true),
    });
    const body = await readBodyCapped(new Response(endless), 4096);
    expect(body).toMatchObject({ truncated: true });
    expect(body.bytes.byteLength).toBe(4096);
    expect(cancelled).toBe(true);
    expect(pulls).toBeLessThan(10);
  });
});

describe("idempotencyKey", () => {
  it("is SHA-256 as crypto.subtle computes it", async () => {
    for (const s of ["", "abc", "a".repeat(55), "a".repeat(64), "é✓😀".repeat(40)]) {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
      expect(sha256Hex(s)).toBe([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
    }
  });

  it("is stable for a run and call path and differs for others", () => {
    expect(idempotencyKey("r1", "w/turn:1/tool:a")).toBe(idempotencyKey("r1", "w/turn:1/tool:a"));
    expect(idempotencyKey("r1", "w/turn:1/tool:a")).not.toBe(idempotencyKey("r2", "w/turn:1/tool:a"));
    expect(idempotencyKey("r1", "w/turn:1/tool:a")).not.toBe(idempotencyKey("r1", "w/turn:1/tool:b"));
  });

  it("reaches a tool as idempotencyKey(run id, call path), through a redacting instance and in nested calls", async () => {
    // The context is copied for the kind's own state and for redaction: the key must survive both copies.
    const keyKind = defineToolset({
      kind: "keys",
      config: z.strictObject({ token: z.string() }),
      create: () => ({}),
      tools: {
        key: tool({ description: "its key", input: z.strictObject({}), readOnly: true, run: (_a, ctx) => ({ path: ctx.callPath, key: ctx.idempotencyKey }) }),
        nested: tool({ description: "a nested call's key", input: z.strictObject({}), readOnly: true, run: (_a, ctx) => ctx.callTool("key", {}) }),
      },
    });
    const model = scriptedModel((_req, n) =>
      n === 0
        ? {
            toolCalls: [
              { id: "a", name: "key", args: {} },
              { id: "b", name: "nested", args: {} },
            ],
          }
        : { text: "done" },
    );
    const h = harness(
      { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  keys: { use: keys, token: "\${TOKEN}" }`) },
      { kinds: [keyKind], models: { "test:m": model } },
    );
    const store = new MemoryJournalStore();
    const out = await executeRun({ ...h.config, vars: { TOKEN: "a-secret-long-enough" } }, store, { runId: "r-keys", worker: "w", input: { input: "x" } });
    expect(out.status).toBe("succeeded");
    const seen = [1, 2].map((i) => (store.entries.get(`w/turn:1/tool:${i}/result`) as { value: { path: string; key: string } }).value);
    expect(seen.map((v) => v.path)).toEqual(["w/turn:1/tool:1", "w/turn:1/tool:2/call:1"]);
    for (const v of seen) expect(v.key).toBe(idempotencyKey("r-keys", v.path));
  });
});
