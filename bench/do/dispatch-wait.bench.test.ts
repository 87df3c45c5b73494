import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, expect, it, vi } from "vitest";
import { CLAIM_TIMEOUT_MS, dispatchTiming, LEASE_MS } from "../../durable-objects/model-dispatch";
import { modelRequests, script, stub } from "../../tests/durable-objects/helpers";
import { consume, holdDispatches } from "../../tests/durable-objects/queue-dispatch";
import { report } from "./report";

/** vitest.bench.config.ts runs this file in both dispatch modes (MODEL_DISPATCH=direct, then =queue). */
const mode = (env.MODEL_DISPATCH as string) === "queue" ? "queue" : "direct";

/**
 * Time scaled down tenfold (a 60 s model takes 6 s here, a 1 s one 0.1 s), and the
 * lease and claim timeout with it: every wait measured here is one of those timers
 * or a model's answer, so the ratios hold; the fixed costs (RPCs, replays: tens of
 * ms) weigh ten times more than they would at full scale, so the scaled numbers are
 * an upper bound once multiplied back.
 */
const SCALE = 0.1;
const SLOW_MS = 60_000 * SCALE;
const QUICK_MS = 1_000 * SCALE;
const IN_FLIGHT = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  Object.assign(dispatchTiming, { leaseMs: LEASE_MS, claimTimeoutMs: CLAIM_TIMEOUT_MS });
  vi.restoreAllMocks();
});

const start = (id: string, worker: string) => stub(id).start({ id, worker, input: { input: "go" }, approvalMode: "ask", budget: {} });

/** The run's alarm every `pause` ms, as the scheduler would fire it, until the run ends (driven: the pool's alarms are a minute ahead). */
async function drive(id: string, pause = 25) {
  for (let i = 0; i < 2_000; i++) {
    const status = (await stub(id).status())!.status;
    if (status !== "running" && status !== "queued") return status;
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await sleep(pause);
  }
  throw new Error(`run ${id} did not end`);
}

/** How long a quick run takes to end while the slow ones are in flight, with this claim timeout. */
async function quickAmongSlow(pass: string, claimTimeoutMs: number): Promise<number> {
  Object.assign(dispatchTiming, { leaseMs: LEASE_MS * SCALE, claimTimeoutMs });
  await script(
    "dispatch-helper",
    Array.from({ length: IN_FLIGHT }, (_, i) => ({ text: `slow ${i}`, delay_ms: SLOW_MS })),
  );
  await script("dispatch-lead", [{ text: "quick", delay_ms: QUICK_MS }]);
  const slow = Array.from({ length: IN_FLIGHT }, (_, i) => `wait-slow-${mode}-${pass}-${i}`);
  await Promise.all(slow.map((id) => start(id, "dispatch-helper")));
  const slowRuns = Promise.all(slow.map((id) => drive(id, 100)));
  // All ten asked: the queue's consumer (one batch) or each run's own object waits for the slow model.
  for (let i = 0; i < 400 && (await modelRequests("dispatch-helper")).length < IN_FLIGHT; i++) await sleep(25);
  expect(await modelRequests("dispatch-helper")).toHaveLength(IN_FLIGHT);

  const quick = `wait-quick-${mode}-${pass}`;
  const t0 = performance.now();
  await start(quick, "dispatch-lead");
  expect(await drive(quick)).toBe("succeeded");
  const tookMs = performance.now() - t0;
  expect(await slowRuns).toEqual(slow.map(() => "succeeded"));
  expect(await modelRequests("dispatch-helper")).toHaveLength(IN_FLIGHT);
  expect(await modelRequests("dispatch-lead")).toHaveLength(1);
  return tookMs;
}

it(`a ${QUICK_MS} ms request started while ${IN_FLIGHT} of ${SLOW_MS} ms are in flight, MODEL_DISPATCH=${mode}`, async () => {
  const claimTimeoutMs = CLAIM_TIMEOUT_MS * SCALE;
  // (A pass without the claim timeout, queue mode as it was before it, is gone: since the consumer claims only what it
  // can send at once, five of six connections, a hand-off with no fallback would wait for a slot, not for the batch.)
  const tookMs = await quickAmongSlow("bounded", claimTimeoutMs);
  report(`dispatch_wait_${mode}`, {
    mode,
    scale: SCALE,
    slowMs: SLOW_MS,
    quickMs: QUICK_MS,
    inFlight: IN_FLIGHT,
    claimTimeoutMs,
    tookMs,
    addedMs: tookMs - QUICK_MS,
  });
}, 120_000);

it.runIf(mode === "queue")(
  "time to recover from a consumer that dies holding a claim, MODEL_DISPATCH=queue",
  async () => {
    Object.assign(dispatchTiming, { leaseMs: LEASE_MS * SCALE, claimTimeoutMs: CLAIM_TIMEOUT_MS * SCALE });
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "recovered", delay_ms: QUICK_MS }]);
    const id = "wait-dead-consumer";
    await start(id, "dispatch-helper");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const [message] = held.splice(0);
    const rpc = env.RUNS.getByName(id) as unknown as { claimModelRequest(k: string, a: number): Promise<unknown> };
    // The consumer claims the request, then dies: no renewal, no answer.
    await rpc.claimModelRequest(message!.key, message!.attempt);
    const t0 = performance.now();
    let resentMs = 0;
    for (let i = 0; i < 2_000 && !resentMs; i++) {
      await sleep(25);
      await runDurableObjectAlarm(env.RUNS.getByName(id));
      if (held.length) resentMs = performance.now() - t0;
    }
    expect(held).toEqual([expect.objectContaining({ attempt: 2 })]);
    await consume(held.splice(0));
    expect(await drive(id)).toBe("succeeded");
    const answeredMs = performance.now() - t0;
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    report("dispatch_recovery", { scale: SCALE, leaseMs: dispatchTiming.leaseMs, quickMs: QUICK_MS, resentMs, answeredMs });
  },
  120_000,
);
