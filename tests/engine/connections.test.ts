import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MemoryJournalStore, scriptedModel } from "../../src/engine";
import { harness, workerFile } from "./helpers";

/** The fake upstream (tests/support/fake-upstream.ts) under a fresh id: its routes, and how many of this test's requests waited for headers at once. */
function upstream() {
  const base = `${env.FAKE_UPSTREAM_A}/${crypto.randomUUID()}`;
  return {
    url: (route: string) => `${base}/${route}`,
    host: new URL(env.FAKE_UPSTREAM_A).host,
    log: async () => {
      const id = base.slice(base.lastIndexOf("/") + 1);
      return (await (await fetch(`${env.FAKE_UPSTREAM_A}/log/${id}`)).json()) as { requests: unknown[]; maxWaiting: number; order: string[] };
    },
  };
}

/** One turn of parallel `fetch` calls through the worker's http instances; each call's recorded result. */
async function oneTurn(toolsets: string, calls: Array<{ name: string; args: { url: string } }>) {
  const approvals = [...new Set(calls.map((c) => c.name))].map((t) => `  ${t}: allow`).join("\n");
  const model = scriptedModel([{ toolCalls: calls.map((c, i) => ({ ...c, id: `c${i}` })) }, { text: "done" }]);
  const h = harness({ "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n${toolsets}\napproval:\n${approvals}`) }, { models: { "test:m": model } });
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "w", input: { input: "x" } }, store);
  expect(out.status).toBe("succeeded");
  return calls.map((_, i) => store.entries.get(`w/turn:1/tool:${i + 1}/result`) as { ok: boolean; value?: { status: number }; error?: string });
}

describe("an activation's connections (six wait for headers at once, as Cloudflare allows per invocation)", () => {
  it("ten parallel http calls in one turn never have more than six requests waiting for headers at the upstream; all ten are answered", async () => {
    const up = upstream();
    const calls = Array.from({ length: 10 }, (_, i) => ({ name: "web_fetch", args: { url: up.url(`slow/400?n=${i}`) } }));
    const results = await oneTurn(`  web: { use: http, allow: ["${up.host}"], timeout_ms: 20000 }`, calls);
    expect(results.every((r) => r.ok && r.value?.status === 200)).toBe(true);
    const log = await up.log();
    expect(log.requests).toHaveLength(10);
    expect(log.maxWaiting).toBe(6);
  });

  it("an http timeout_ms counts from when the request starts: a call queued behind six slow ones still gets all of its 300 ms", async () => {
    const up = upstream();
    const slow = Array.from({ length: 6 }, (_, i) => ({ name: "slow_fetch", args: { url: up.url(`slow/1500?n=${i}`) } }));
    const quick = { name: "quick_fetch", args: { url: up.url("slow/50") } };
    const results = await oneTurn(
      [`  slow: { use: http, allow: ["${up.host}"], timeout_ms: 20000 }`, `  quick: { use: http, allow: ["${up.host}"], timeout_ms: 300 }`].join("\n"),
      [...slow, quick],
    );
    expect(results[6]).toMatchObject({ ok: true, value: { status: 200 } });
    // It did wait for a connection: it reached the upstream only once a slow one had its answer (1.5 s, five times its timeout).
    const { order } = await up.log();
    expect(order.indexOf(`arrived ${new URL(quick.args.url).pathname}`)).toBeGreaterThan(order.findIndex((e) => e.startsWith("answered")));
  });
});
