import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { ToolContextBridge, type GlobalCall, type GlobalResult } from "../../durable-objects/global-toolsets-bridge";
import type { ToolContext } from "../../src/engine";
import { indexShardOf, LEGACY_INDEX, RUN_INDEX_SHARDS } from "../../src/runs/index-shards";
import { approvedRun, globalToolRun } from "../../tests/durable-objects/hot-path";
import { report } from "./report";

/**
 * What `bench/scale.mjs` models scale from (BENCHMARKS.md, "Scale"): the requests a run's object
 * sends to each object kind over its hot path (start, pause for an approval, finish), counted in real
 * runs; the run index before sharding (every run to the one object "index") and after (to its shard);
 * how evenly the shard hash spreads ids; and the global toolsets object's throughput here.
 */

const RUNS = 5;

/** Requests per run by binding, split into the instance every run shares and the others. */
function perRun(outs: Record<string, number>[]) {
  const kinds: Record<string, { perRun: number; shared: number; instances: number }> = {};
  const names = (binding: string, out: Record<string, number>) => Object.keys(out).filter((k) => k.startsWith(`${binding} `));
  const bindings = new Set(outs.flatMap((o) => Object.keys(o).map((k) => k.split(" ")[0]!)));
  for (const b of bindings) {
    const total = outs.reduce((n, o) => n + names(b, o).reduce((m, k) => m + o[k]!, 0), 0);
    const every = names(b, outs[0]!).filter((k) => outs.every((o) => k in o));
    const shared = outs.reduce((n, o) => n + every.reduce((m, k) => m + (o[k] ?? 0), 0), 0);
    kinds[b] = { perRun: total / outs.length, shared: shared / outs.length, instances: new Set(outs.flatMap((o) => names(b, o))).size };
  }
  return kinds;
}

it("requests per run to each object kind, before and after sharding the run index; shard balance; global toolsets throughput", async () => {
  const before: Record<string, number>[] = [];
  const after: Record<string, number>[] = [];
  for (let i = 0; i < RUNS; i++) before.push(await approvedRun(`scale-before-${i}`, false));
  for (let i = 0; i < RUNS; i++) after.push(await approvedRun(`scale-after-${i}`, true));
  for (const [i, out] of after.entries()) expect(out[`RUN_INDEX ${LEGACY_INDEX}`], `run ${i}`).toBeUndefined();
  const global: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) global.push(await globalToolRun(`scale-global-${i}`));

  // The hash over 100,000 random ids: the busiest shard's share of reports, against the even 1/N.
  const shards = new Map<string, number>();
  const ids = 100_000;
  for (let i = 0; i < ids; i++) {
    const s = indexShardOf(crypto.randomUUID());
    shards.set(s, (shards.get(s) ?? 0) + 1);
  }
  const maxShare = Math.max(...shards.values()) / ids;

  // The global toolsets object: counter calls (a state read and write each) from 50 callers at once.
  const object = env.GLOBAL_TOOLSETS.getByName("global") as unknown as { callTool(c: GlobalCall, b: ToolContextBridge): Promise<GlobalResult> };
  const bridge = new ToolContextBridge({} as ToolContext);
  const call = (n: number): GlobalCall => ({
    key: "bench:counter:scale",
    name: "bench",
    kind: "counter",
    config: { start: 0 },
    tool: "increment",
    args: { by: 1 },
    ctx: { runId: "scale", callPath: `p${n}`, idempotencyKey: `k${n}`, depth: 0, workerChain: [] },
  });
  expect(await object.callTool(call(-1), bridge)).toMatchObject({ ok: true }); // warm: instance made
  const calls = 2000;
  const concurrency = 50;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) expect((await object.callTool(call(next++), bridge)).ok).toBe(true);
    }),
  );
  const globalCallsPerSecond = calls / ((performance.now() - t0) / 1000);

  report("scale", {
    runs: RUNS,
    before: perRun(before),
    after: perRun(after),
    global: perRun(global),
    shards: RUN_INDEX_SHARDS,
    shardMaxShare: maxShare,
    globalCallsPerSecond,
    globalConcurrency: concurrency,
  });
});
