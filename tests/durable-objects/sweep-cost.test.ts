import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { RunIndexDO } from "../../durable-objects/run-index";
import type { RunSummary } from "../../src/runs/index-types";
import type { RunStatusName } from "../../src/runs/types";
import type { TestRunIndexRpc } from "../support/test-objects";
import { stub } from "./helpers";

/**
 * What the stuck-run sweep costs (docs/operate.md, "Stuck runs"; docs/cost.md): rows the index
 * reads per sweep when nothing is stuck, rows a healthy run's object reads to answer, and rows
 * the sweep's partial index adds to a run's reports. Each measure uses its own index object
 * (the RunIndexDO class under another name), so nothing else in the file counts.
 */

const indexNamed = (name: string) => env.RUN_INDEX.getByName(name) as unknown as TestRunIndexRpc;
const sweepOf = (name: string) => runInDurableObject(env.RUN_INDEX.getByName(name), (instance) => (instance as RunIndexDO).alarm());
const DAY = 86_400_000;

const report = (id: string, status: RunStatusName, version: number, at: number, pending = 0): RunSummary => ({
  id,
  worker: "sweep-cost",
  status,
  trigger: { kind: "api" },
  attributes: {},
  created_at: at,
  updated_at: at + version,
  usage: null,
  version,
  pending: Array.from({ length: pending }, (_, i) => ({ id: `ap_${i}`, tool: "fx_fetch", worker_chain: ["sweep-cost"], created_at: at, expires_at: at + DAY })),
});

/** The reports of a run with one approval, as its object sends them: queued, running, paused, decided, succeeded. */
const lifecycleOf = (id: string, at: number): RunSummary[] => [
  report(id, "queued", 1, at),
  report(id, "running", 2, at),
  report(id, "awaiting_approval", 3, at, 1),
  report(id, "running", 4, at),
  report(id, "succeeded", 5, at),
];

async function rowsDuring(name: string, fn: () => Promise<unknown>) {
  const before = await indexNamed(name).storageStats();
  await fn();
  const after = await indexNamed(name).storageStats();
  return { read: after.rowsRead - before.rowsRead, written: after.rowsWritten - before.rowsWritten };
}

it("a run's reports: rows written in the index with the sweep's partial index, and without it", async () => {
  const perRun: Record<string, number> = {};
  for (const [name, partial] of [
    ["cost-reports-with", true],
    ["cost-reports-without", false],
  ] as const) {
    await indexNamed(name).pendingApprovals(); // made, with its schema
    if (!partial) await runInDurableObject(env.RUN_INDEX.getByName(name), (_o, state) => void state.storage.sql.exec("DROP INDEX runs_live"));
    const { written } = await rowsDuring(name, async () => {
      for (let r = 0; r < 20; r++) for (const s of lifecycleOf(`${name}-${r}`, Date.now())) await indexNamed(name).upsert(s);
    });
    perRun[name] = written / 20;
  }
  console.log(
    `stuck-run sweep cost: index rows written per run (5 reports): ${perRun["cost-reports-with"]} with runs_live, ${perRun["cost-reports-without"]} without`,
  );
  // The live set entered and left twice (queued … paused, decided … succeeded): SQLite rewrites a partial index's entry whenever
  // the upsert sets `status`, whatever the key (measured alike for (created_at, id) and (status)).
  expect(perRun["cost-reports-with"]! - perRun["cost-reports-without"]!).toBe(3);
});

it("a sweep with nothing to ask reads two rows, however many runs the index holds; a healthy run answers from a few rows, writing none", async () => {
  const name = "cost-sweep";
  const old = Date.now() - 40 * DAY;
  for (let r = 0; r < 2000; r++) await indexNamed(name).upsert(report(`ended-${r}`, r % 3 ? "succeeded" : "failed", 5, old + r));
  for (let r = 0; r < 50; r++) await indexNamed(name).upsert(report(`young-${r}`, "running", 2, Date.now()));
  // The 50 running runs were heard of just now: not asked.
  const idle = await rowsDuring(name, () => sweepOf(name));
  // Five real runs, queued with their first alarm set (never driven here), listed as heard of long ago; the index holds their newest version.
  for (let r = 0; r < 5; r++) {
    const id = `cost-healthy-${r}`;
    await stub(id).start({ id, worker: "sweep-cost", input: { input: "x" }, approvalMode: "ask", budget: {} });
    await indexNamed(name).upsert({ ...report(id, "queued", Number.MAX_SAFE_INTEGER, old), updated_at: old });
  }
  const run0 = await stub("cost-healthy-0").storageStats();
  const healthy = await rowsDuring(name, () => sweepOf(name));
  const run1 = await stub("cost-healthy-0").storageStats();
  console.log(
    `stuck-run sweep cost: index of 2,000 ended + 50 young running runs: ${idle.read} rows read, ${idle.written} written per sweep; ` +
      `with 5 healthy candidates: ${healthy.read} read, ${healthy.written} written (each run's object: ${run1.rowsRead - run0.rowsRead} read, ${run1.rowsWritten - run0.rowsWritten} written)`,
  );
  // The live set's first row past the cutoff (the page's query stops there), and the one that says a sweep is due again.
  expect(idle).toEqual({ read: 2, written: 0 });
  expect(healthy).toEqual({ read: 2 + 5, written: 0 });
  expect(run1.rowsWritten - run0.rowsWritten).toBe(0);
  expect(run1.alarmsSet - run0.alarmsSet).toBe(0);
});
