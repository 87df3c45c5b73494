import { createExecutionContext, createMessageBatch, getQueueResult, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import { liveText } from "../../durable-objects/model-consumer";
import { DEFAULT_DELTA_INTERVAL_MS, UNWATCHED_INTERVAL_MS, type ForwardStats } from "../../durable-objects/delta-forwarder";
import { script, stub } from "../../tests/durable-objects/helpers";
import { holdDispatches } from "../../tests/durable-objects/queue-dispatch";
import worker from "../../tests/support/test-worker";
import { report } from "./report";

afterEach(() => vi.restoreAllMocks());

const WORKER = "live-queue-writer";
/** A model writing a piece every 40 ms (25 a second), for about this many seconds. */
const ANSWER_SECONDS = [2, 10];
const PIECE_MS = 40;
/** How often an open run page reads the object (src/http/run-event-stream.ts SSE_POLL_MS): its events and its live text. */
const PAGE_POLL_MS = 250;
/** Each case measured this many times (bench/live-text-cost.mjs reports the median), after one run unmeasured (the first object's start-up). */
const REPEATS = 3;

type Watcher = "off" | "unwatched" | "watched";

/** Calls into the run's object: how many, and their wall time (an upper bound of the time they keep it active). */
interface Tally {
  requests: number;
  ms: number;
  byMethod: Record<string, { n: number; ms: number }>;
}
const tally = (): Tally => ({ requests: 0, ms: 0, byMethod: {} });

async function timed<T>(t: Tally, method: string, call: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await call();
  } finally {
    const ms = performance.now() - t0;
    const m = (t.byMethod[method] ??= { n: 0, ms: 0 });
    t.requests++;
    t.ms += ms;
    m.n++;
    m.ms += ms;
  }
}

/** The RUNS namespace as the consumer sees it, every call into a run's object counted in `t`. */
function countedRuns(t: Tally): Pick<DurableObjectNamespace, "get" | "idFromString"> {
  return {
    idFromString: (s) => env.RUNS.idFromString(s),
    get: (id) => {
      const stub = env.RUNS.get(id) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      return new Proxy({} as DurableObjectStub, {
        get: (_target, method) =>
          typeof method === "string" && method !== "then" ? (...args: unknown[]) => timed(t, method, () => stub[method]!(...args)) : undefined,
      });
    },
  };
}

/** The app's queue consumer on these messages, with `vars` over the test's and its calls into run objects counted. */
async function consume(messages: unknown[], t: Tally, vars: Record<string, string>) {
  const batch = createMessageBatch(
    "edgework-model-requests",
    messages.map((body, i) => ({ id: `live-bench-${Date.now()}-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  const consumerEnv = { ...env, ...vars, RUNS: countedRuns(t) } as unknown as Env;
  await (worker.queue as (b: MessageBatch<unknown>, e: Env, c: ExecutionContext) => Promise<void>)(batch, consumerEnv, ctx);
  return getQueueResult(batch, ctx);
}

/**
 * One run of one model request whose answer streams for `seconds`, in queue mode, with
 * live text `off` (MODEL_DELTA_INTERVAL_MS=0: the non-streaming figure), on with nobody
 * watching, or on while a run page reads the object every quarter second (its reads
 * counted apart: a page costs them whatever it shows). Counted: every call into the run's
 * object (start, alarms, the consumer's claim, forwards and delivery) and its wall time.
 */
async function measure(seconds: number, watcher: Watcher, repeat: number) {
  const id = `live-cost-${seconds}s-${watcher}-${repeat}`;
  const pieces = Array.from({ length: (seconds * 1000) / PIECE_MS }, (_, i) => `word${i} `);
  // Off, the consumer asks without streaming: the same answer, as late.
  await script(WORKER, [
    watcher === "off" ? { text: pieces.join(""), delay_ms: seconds * 1000 } : { text: pieces.join(""), chunks: pieces, chunk_delay_ms: PIECE_MS },
  ]);
  const held = holdDispatches();
  const forwards: ForwardStats[] = [];
  vi.spyOn(liveText, "forwarded").mockImplementation((_key, s) => void forwards.push({ ...s }));
  const object = tally();
  const page = tally();
  const began = performance.now();
  await timed(object, "start", () => stub(id).start({ id, worker: WORKER, input: { input: "go" }, approvalMode: "ask", budget: {} }));
  let alarms = 0;
  let stop = false;
  let reading: Promise<void> = Promise.resolve();
  if (watcher === "watched") {
    reading = (async () => {
      let cursor = "0-0";
      let seq = 0;
      while (!stop) {
        const events = await timed(page, "eventsSince", () => stub(id).eventsSince(cursor));
        cursor = events?.events.at(-1)?.id ?? cursor;
        seq = (await timed(page, "deltasSince", () => stub(id).deltasSince(seq))).next;
        await new Promise((r) => setTimeout(r, PAGE_POLL_MS));
      }
    })();
  }
  let consumerMs = 0;
  for (let i = 0; i < 10 && (await stub(id).status())!.status !== "succeeded"; i++) {
    if (await timed(object, "alarm", () => runDurableObjectAlarm(env.RUNS.getByName(id)))) alarms++;
    if (!held.length) continue;
    const t0 = performance.now();
    await consume(held.splice(0), object, watcher === "off" ? { MODEL_DELTA_INTERVAL_MS: "0" } : {});
    consumerMs += performance.now() - t0;
  }
  stop = true;
  await reading;
  const wallMs = performance.now() - began;
  expect((await stub(id).status())!.status).toBe("succeeded");
  const stats = await stub(id).storageStats();
  return {
    seconds,
    watcher,
    repeat,
    forwards: forwards[0]?.forwards ?? 0,
    forwardedChars: forwards[0]?.chars ?? 0,
    requests: object.requests,
    byMethod: object.byMethod,
    activeMs: object.ms,
    forwardMs: object.byMethod.forwardModelText?.ms ?? 0,
    alarms,
    rowsWritten: stats.rowsWritten,
    rowsRead: stats.rowsRead,
    consumerMs,
    wallMs,
    pageRequests: page.requests,
    pageMs: page.ms,
  };
}

it("live text in queue mode: what streaming a 2 s and a 10 s answer costs the run's object, off, unwatched and watched", async () => {
  expect(env.MODEL_DISPATCH as string, "vitest.bench.config.ts runs this in the bench-queue project").toBe("queue");
  await measure(1, "watched", 0);
  const runs = [];
  for (let repeat = 1; repeat <= REPEATS; repeat++)
    for (const seconds of ANSWER_SECONDS) for (const watcher of ["off", "unwatched", "watched"] as const) runs.push(await measure(seconds, watcher, repeat));
  for (const r of runs) {
    if (r.watcher === "off") expect(r.forwards).toBe(0);
    else expect(r.forwards).toBeGreaterThan(0);
    expect(r.byMethod.forwardModelText?.n ?? 0).toBe(r.forwards);
  }
  report("live_text", { pieceMs: PIECE_MS, pagePollMs: PAGE_POLL_MS, intervalMs: DEFAULT_DELTA_INTERVAL_MS, unwatchedIntervalMs: UNWATCHED_INTERVAL_MS, runs });
}, 300_000);
