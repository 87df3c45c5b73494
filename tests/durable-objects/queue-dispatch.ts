import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { modelQueue, type DispatchMessage } from "../../durable-objects/model-dispatch";
import type { RunView } from "../../src/runs/types";
import worker from "../support/test-worker";
import { settle } from "./helpers";

/** Keeps every message runs hand to the model queue instead of sending it: the test delivers (or drops) them. */
export function holdDispatches(): DispatchMessage[] {
  const held: DispatchMessage[] = [];
  vi.spyOn(modelQueue, "send").mockImplementation(async (_queue, message) => void held.push(message));
  return held;
}

let delivered = 0;

/** Runs the app's queue consumer on these messages as the queue would, to its end; each message's ack or retry. */
export async function consume(messages: unknown[]) {
  const batch = createMessageBatch(
    "edgework-model-requests",
    messages.map((body) => ({ id: `msg-${++delivered}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await (worker.queue as (b: MessageBatch<unknown>, e: Env, c: ExecutionContext) => Promise<void>)(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

/** As if the lease of the run's unanswered hand-offs (unclaimed or claimed) had lapsed. */
export const timeOutHandOffs = (id: string) =>
  runInDurableObject(
    env.RUNS.getByName(id),
    (_o, state) => void state.storage.sql.exec("UPDATE model_dispatch SET sent_at = 0, lease_until = 0 WHERE answer IS NULL"),
  );

/** The run's model_dispatch rows. */
export const handOffs = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec<{ key: string; attempt: number; claimed: number | null; answer: string | null }>(
        "SELECT key, attempt, claimed, answer FROM model_dispatch ORDER BY key",
      )
      .toArray(),
  );

/**
 * `settle` for queue mode: runs the alarm, then delivers what the activation handed
 * off through the consumer, until the run stops (ended, paused, or nothing armed).
 */
export function settleQueued(id: string, held: DispatchMessage[], opts: { count?: { activations: number; failed: number } } = {}): Promise<RunView> {
  return settle(id, { ...opts, maxActivations: 60, afterActivation: async () => void (held.length && (await consume(held.splice(0)))) });
}
