import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { RunView } from "../../src/runs/types";
import { effectCount, modelRequests, settle, stub } from "../../tests/durable-objects/helpers";
import { NESTED_EFFECTS, scriptNestedRun } from "../../tests/durable-objects/nested-run";
import { holdDispatches, settleQueued } from "../../tests/durable-objects/queue-dispatch";
import { report } from "./report";

const RUNS = 200;

/** A small seeded PRNG (mulberry32), so a failing fault can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Settle = (id: string, opts: { count: { activations: number; failed: number } }) => Promise<RunView>;

/** vitest.bench.config.ts runs this file twice: with MODEL_DISPATCH=direct and =queue. */
const queued = (env.MODEL_DISPATCH as string) === "queue";

it.skipIf(queued)(`${RUNS} runs with a fault injected at a random step`, () => faultRuns("faults", settle), 300_000);

// The same runs with model requests handed to the queue; the test delivers each activation's messages through the consumer.
it.runIf(queued)(
  `${RUNS} runs with a fault injected at a random step, MODEL_DISPATCH=queue`,
  () => {
    const held = holdDispatches();
    return faultRuns("faultsQueue", (id, opts) => settleQueued(id, held, opts));
  },
  300_000,
);

async function faultRuns(section: string, settle: Settle) {
  const seed = 20261122;
  const random = prng(seed);
  const tally = {
    runs: 0,
    completed: 0,
    faultsFired: 0,
    effectsExactlyOnce: 0,
    modelRequestsExactlyOnce: 0,
    byMode: { throw: 0, abort: 0 } as Record<string, number>,
  };
  /** The runs that were not exactly once, to replay them (same seed, same run number). */
  const misses: Array<{ run: number; mode: string; atJournalSize: number; effects: Record<string, number> }> = [];
  for (let r = 0; r < RUNS; r++) {
    const tag = `fault-${r}`;
    const mode = random() < 0.5 ? "throw" : "abort";
    const atJournalSize = Math.floor(random() * 16);
    await scriptNestedRun(tag);
    await stub(tag).start({ id: tag, worker: "evict-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await stub(tag).setTestHooks({ fault: { atJournalSize, mode } });
    const count = { activations: 0, failed: 0 };
    let view = await settle(tag, { count });
    while (view.status === "awaiting_approval") {
      await stub(tag).decide(view.approvals.find((a) => a.status === "pending")!.id, { decision: "approve", by: "bench" });
      view = await settle(tag, { count });
    }
    tally.runs++;
    tally.byMode[mode]!++;
    tally.faultsFired += count.failed;
    if (view.status === "succeeded" && view.output === "outer done") tally.completed++;
    const effects = await Promise.all(NESTED_EFFECTS.map((e) => effectCount(`${tag}-${e}`)));
    if (effects.every((n) => n === 1)) tally.effectsExactlyOnce++;
    else misses.push({ run: r, mode, atJournalSize, effects: Object.fromEntries(NESTED_EFFECTS.map((e, i) => [e, effects[i]!])) });
    if ((await modelRequests("evict-outer")).length === 3 && (await modelRequests("evict-inner")).length === 3) tally.modelRequestsExactlyOnce++;
  }
  report(section, { seed, ...tally, misses });
  expect(tally).toMatchObject({ completed: RUNS, effectsExactlyOnce: RUNS, modelRequestsExactlyOnce: RUNS, faultsFired: RUNS });
}
