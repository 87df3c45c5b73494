import { createExecutionContext, createMessageBatch, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { modelQueue, type DispatchMessage } from "../../durable-objects/model-dispatch";
import type { RunView } from "../../durable-objects/run-types";
import worker from "../../src/index";
import { stub } from "./helpers";

/** Keeps every message runs hand to the model queue instead of sending it: the test delivers (or drops) them. */
export function holdDispatches(): DispatchMessage[] {
  const held: DispatchMessage[] = [];
  vi.spyOn(modelQueue, "send").mockImplementation(async (_queue, message) => void held.push(message));
  return held;
}

let delivered = 0;

/** Runs the app's queue consumer on these messages as the queue would, to its end; each message's ack or retry. */
export async function consume(messages: unknown[]) {
  const batch = createMessageBatch("edgework-model-requests", messages.map((body) => ({ id: `msg-${++delivered}`, timestamp: new Date(), attempts: 1, body })));
  const ctx = createExecutionContext();
  await (worker.queue as (b: MessageBatch<unknown>, e: Env, c: ExecutionContext) => Promise<void>)(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

/** As if the lease of the run's unanswered hand-offs (unclaimed or claimed) had lapsed. */
export const timeOutHandOffs = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => void state.storage.sql.exec("UPDATE model_dispatch SET sent_at = 0, lease_until = 0 WHERE answer IS NULL"));

/** The run's model_dispatch rows. */
export const handOffs = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.sql.exec<{ key: string; attempt: number; claimed: number | null; answer: string | null }>("SELECT key, attempt, claimed, answer FROM model_dispatch ORDER BY key").toArray());

/**
 * `settle` for queue mode: runs the alarm, then delivers what the activation handed
 * off through the consumer, until the run stops (ended, paused, or nothing armed).
 */
export async function settleQueued(id: string, held: DispatchMessage[], opts: { count?: { activations: number; failed: number } } = {}): Promise<RunView> {
  for (let i = 0; i < 60; i++) {
    let ran = false;
    try {
      ran = await runDurableObjectAlarm(env.RUNS.getByName(id));
    } catch {
      ran = true;
      if (opts.count) opts.count.failed++;
    }
    if (ran && opts.count) opts.count.activations++;
    if (held.length) await consume(held.splice(0));
    const view = (await stub(id).status())!;
    if (!["queued", "running"].includes(view.status)) return view;
    if (!ran) await stub(id).wake();
  }
  throw new Error(`run ${id} did not settle`);
}
