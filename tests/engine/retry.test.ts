import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CatalogError, MemoryJournalStore, RunInterrupted, scriptedModel, type ScriptedReply } from "../../src/engine";
import { harness, workerFile } from "./helpers";

const host = new URL(env.FAKE_UPSTREAM_A).host;

const log = async (id: string) =>
  (await (await fetch(`${env.FAKE_UPSTREAM_A}/log/${id}`)).json()) as { requests: Array<{ headers: Record<string, string> }>; order: string[] };

/** A fresh id's routes on the fake upstream (tests/support/fake-upstream.ts), and what they saw. */
function upstream() {
  const id = crypto.randomUUID();
  return {
    url: (route: string) => `${env.FAKE_UPSTREAM_A}/${id}/${route}`,
    requests: async () => (await log(id)).requests,
    /** Resolves once the upstream has answered `n` requests (an abandoned try's included: nothing is left in flight). */
    answered: async (n: number) => {
      while ((await log(id)).order.filter((o) => o.startsWith("answered")).length < n) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/** A worker whose `api` http instance has `retry` (and `extra` config), calling it once with `args`. */
function retryRun(retry: string, args: Record<string, unknown>, extra = "") {
  const calls: NonNullable<ScriptedReply["toolCalls"]> = [{ id: "c1", name: "api_fetch", args }];
  const seen: Array<{ messages: Array<{ role: string; content?: unknown }> }> = [];
  const model = scriptedModel((req, n) => {
    seen.push(req as never);
    return n === 0 ? { toolCalls: calls } : { text: "done" };
  });
  const h = harness(
    {
      "w.worker": workerFile(
        `name: w\nmodel: test:m\ntoolsets:\n  api: { use: http, allow: ["${host}"], retry: ${retry}${extra} }\napproval:\n  api_fetch: allow`,
      ),
    },
    { models: { "test:m": model } },
  );
  const store = new MemoryJournalStore();
  const keys = () => [...store.entries.keys()].filter((k) => k.startsWith("w/turn:1/tool:1/"));
  return {
    h,
    seen,
    store,
    keys,
    result: () => store.entries.get("w/turn:1/tool:1/result") as any,
    run: () => h.run({ runId: "r1", worker: "w", input: { input: "x" } }, store),
  };
}

const POST = (url: string) => ({ url, method: "POST", body: "{}" });

describe("retry: a toolset instance's tools tried again after a transient failure", () => {
  it("503 twice then 200: three tries with one idempotency key, each failure recorded, the result once", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 3, backoff: 10ms, on: [5xx] }", POST(up.url("flaky/2?status=503")));
    expect(await r.run()).toMatchObject({ status: "succeeded" });
    const seen = await up.requests();
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^ew_[0-9a-f]{40}$/);
    expect(r.result()).toMatchObject({ ok: true, value: { status: 200 } });
    expect(r.keys()).toEqual(["w/turn:1/tool:1/attempt:1", "w/turn:1/tool:1/attempt:2", "w/turn:1/tool:1/result"]);
    expect(r.store.entries.get("w/turn:1/tool:1/attempt:2")).toMatchObject({
      tool: "fetch",
      failure: { reason: "status", status: 503 },
    });
  });

  it("a 4xx other than 429 is not retried: one request, its answer is the result", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 5, backoff: 10ms }", POST(up.url("flaky/3?status=404")));
    await r.run();
    expect(await up.requests()).toHaveLength(1);
    expect(r.result()).toMatchObject({ ok: true, value: { status: 404 } });
    expect(r.keys()).toEqual(["w/turn:1/tool:1/result"]);
  });

  it("a 5xx is not retried when on: leaves it out", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 5, backoff: 10ms, on: [429, timeout] }", POST(up.url("flaky/3?status=502")));
    await r.run();
    expect(await up.requests()).toHaveLength(1);
  });

  it("attempts exhausted: the last answer reaches the model once", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 3, backoff: 10ms }", POST(up.url("flaky/9?status=503")));
    await r.run();
    expect(await up.requests()).toHaveLength(3);
    expect(r.result()).toMatchObject({ ok: true, value: { status: 503 } });
    const toolMessages = r.seen[1]!.messages.filter((m) => m.role === "tool");
    expect(toolMessages).toHaveLength(1);
    expect(JSON.stringify(toolMessages[0]!.content)).toContain("503");
  });

  it("timeouts exhausted: the tool's error reaches the model once, as the call's recorded error", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 2, backoff: 10ms, on: [timeout] }", POST(up.url("slow/300")), ", timeout_ms: 50");
    await r.run();
    expect(await up.requests()).toHaveLength(2);
    expect(r.result()).toMatchObject({ ok: false, error: expect.stringContaining("timed out after 50 ms") });
    expect(r.store.entries.get("w/turn:1/tool:1/attempt:1")).toMatchObject({ error: expect.stringContaining("timed out"), failure: { reason: "timeout" } });
    await up.answered(2);
    const toolMessages = r.seen[1]!.messages.filter((m) => m.role === "tool");
    expect(toolMessages).toHaveLength(1);
  });

  it("the per-tool timeout_ms bounds each try of a tool whose kind has none of its own", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 2, backoff: 10ms, tools: { fetch: { timeout_ms: 50 } } }", POST(up.url("slow/300")));
    await r.run();
    expect(r.result()).toMatchObject({ ok: false, error: "fetch timed out after 50 ms" });
    expect(await up.requests()).toHaveLength(2);
    await up.answered(2);
  });

  it("429 with a Retry-After within the bound waits that long; one past the bound is not retried", async () => {
    const soon = upstream();
    const a = retryRun("{ attempts: 2, backoff: 10ms }", POST(soon.url("flaky/1?status=429&retry_after=0")));
    await a.run();
    expect(await soon.requests()).toHaveLength(2);
    expect(a.store.entries.get("w/turn:1/tool:1/attempt:1")).toMatchObject({ failure: { reason: "status", status: 429, retryAfterMs: 0 } });
    const late = upstream();
    const b = retryRun("{ attempts: 2, backoff: 10ms }", POST(late.url("flaky/1?status=429&retry_after=3600")));
    await b.run();
    expect(await late.requests()).toHaveLength(1);
    expect(b.result()).toMatchObject({ ok: true, value: { status: 429, retry_after: "3600" } });
  });

  it("a crash between tries resumes at the next one: no recorded try is made again", async () => {
    const up = upstream();
    const r = retryRun("{ attempts: 4, backoff: 10ms }", POST(up.url("flaky/2?status=503")));
    let crashed = false;
    r.h.config.beforeStep = (key) => {
      if (key.endsWith("/attempt:2") && !crashed) {
        crashed = true;
        throw new RunInterrupted("fault");
      }
    };
    await expect(r.run()).rejects.toBeInstanceOf(RunInterrupted);
    expect(await up.requests()).toHaveLength(1);
    expect(r.keys()).toEqual(["w/turn:1/tool:1/attempt:1"]);
    expect(await r.run()).toMatchObject({ status: "succeeded" });
    // Try 1 once, try 2 (503) and try 3 (200) after the resume: three in all.
    expect(await up.requests()).toHaveLength(3);
    expect(r.result()).toMatchObject({ ok: true, value: { status: 200 } });
    // A replay of the finished run makes none.
    await r.run();
    expect(await up.requests()).toHaveLength(3);
  });

  it("no retry configured: a 503 is the result at once, nothing else recorded", async () => {
    const up = upstream();
    const calls: NonNullable<ScriptedReply["toolCalls"]> = [{ id: "c1", name: "api_fetch", args: POST(up.url("flaky/2?status=503")) }];
    const h = harness(
      { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  api: { use: http, allow: ["${host}"] }\napproval:\n  api_fetch: allow`) },
      { models: { "test:m": scriptedModel([{ toolCalls: calls }, { text: "done" }]) } },
    );
    const store = new MemoryJournalStore();
    await h.run({ worker: "w", input: { input: "x" } }, store);
    expect(await up.requests()).toHaveLength(1);
    expect([...store.entries.keys()].filter((k) => k.includes("attempt"))).toEqual([]);
  });

  it("hostile retry config is refused when the catalog loads, naming the file and the field", () => {
    const load = (retry: string) => {
      try {
        harness({ "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  api: { use: http, allow: ["${host}"], retry: ${retry} }`) });
      } catch (err) {
        expect(err).toBeInstanceOf(CatalogError);
        return (err as CatalogError).problems.map((p) => p.message);
      }
      return [];
    };
    expect(load("{ attempts: 11 }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.attempts: /)]);
    expect(load("{ attempts: 0 }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.attempts: /)]);
    expect(load("{ backoff: 10m }")).toEqual(["w.worker: toolsets.api.retry.backoff: must be at most 30s"]);
    expect(load("{ backoff: 1h }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.backoff: must be a duration like/)]);
    expect(load(`{ backoff: "${"9".repeat(10_000)}s" }`)).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.backoff: /)]);
    expect(load("{ on: [4xx] }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.on\.0: /)]);
    expect(load("{ timeout_ms: 999999 }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.timeout_ms: /)]);
    expect(load("{ forever: true }")).toEqual(["w.worker: toolsets.api.retry.forever: unknown key"]);
    expect(load("{ tools: { nope: { attempts: 2 } } }")).toEqual(['w.worker: toolsets.api.retry.tools.nope: kind "http" has no tool "nope"; it has: fetch']);
    expect(load("{ tools: { fetch: { attempts: 99 } } }")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry\.tools\.fetch\.attempts: /)]);
    expect(load("[3]")).toEqual([expect.stringMatching(/^w\.worker: toolsets\.api\.retry: /)]);
    expect(load("{ attempts: 3, backoff: 30s, on: [timeout, 5xx, 429], timeout_ms: 5000, tools: { fetch: { attempts: 1 } } }")).toEqual([]);
  });
});
