import { messageOf } from "../src/engine";
import { DeltaForwarder, deltaIntervalMs, type ForwardStats } from "./delta-forwarder";
import { appModels } from "./engine-config";
import { ConnectionSlots, MAX_CONNECTIONS, withHeld, type Connection, type Connections } from "../src/engine/net/connection-slots";
import {
  dispatchMessage,
  dispatchTimeoutMs,
  dispatchTiming,
  RENEWALS_PER_LEASE,
  unwire,
  type ClaimedRequest,
  type DeliveredAnswer,
  type DispatchMessage,
} from "./model-dispatch";
import type { RunDO } from "./run/run";

type RunDispatchRpc = Pick<RunDO, "claimModelRequest" | "renewModelClaim" | "deliverModelAnswer" | "forwardModelText">;

/** The one seam for forwarding live text (tests spy on it to fail, hang or count forwards). */
export const liveText = {
  forward(stub: RunDispatchRpc, key: string, attempt: number, n: number, text: string): Promise<{ watched: boolean }> {
    return stub.forwardModelText(key, attempt, n, text);
  },
  /** Called once per answer with what forwarding it cost (tests and the cost probe read it). */
  forwarded(_key: string, _stats: ForwardStats): void {},
};

/** Tries of the delivery RPC before the message goes back to the queue. */
const DELIVERY_TRIES = 3;

/**
 * Model requests of one batch waiting for their response headers at once. The batch is
 * one invocation: six connections may wait for headers (connection-slots.ts); its model
 * requests are its only fetches. Its other calls — claims, renewals, live-text forwards,
 * deliveries — are Durable Object RPCs, which the platform's list of what counts does not
 * name; one connection is left to them anyway, so that were they counted, a renewal would
 * never wait behind six slow models until its lease lapsed (the run would then send the
 * request again, and the model be asked twice).
 */
export const MODEL_CONNECTIONS = MAX_CONNECTIONS - 1;

/**
 * The queue consumer of MODEL_DISPATCH=queue: for each message, claims the request
 * from its run's object, asks the model (resolved from the run's pinned models.yaml,
 * exactly as the run would, provider errors redacted the same way) and delivers the
 * answer. Stateless: a model failure is delivered as a failure (the run fails with
 * model_error, as in direct mode), never retried by the queue.
 */
export async function consumeModelRequests(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const connections = new ConnectionSlots(MODEL_CONNECTIONS);
  // Settled one by one: one message that throws must not cut short the others' requests.
  await Promise.allSettled(batch.messages.map((message) => consume(message, env, connections)));
}

async function consume(message: Message<unknown>, env: Env, connections: Connections): Promise<void> {
  const parsed = dispatchMessage.safeParse(message.body);
  if (!parsed.success) {
    // Not ours (or corrupt): no retry would change it.
    console.warn(JSON.stringify({ edgework: "model_dispatch_bad_message", issues: parsed.error.issues.length }));
    return message.ack();
  }
  const { run, key, attempt } = parsed.data;
  let stub: RunDispatchRpc;
  try {
    stub = env.RUNS.get(env.RUNS.idFromString(run)) as unknown as RunDispatchRpc;
  } catch {
    // An id of another namespace: no run of ours.
    console.warn(JSON.stringify({ edgework: "model_dispatch_bad_message", issues: 1 }));
    return message.ack();
  }
  // Claimed only once its model request can be sent at once: one waiting for a connection waits
  // unclaimed, so the run's claim timeout stays true (when none comes free in time, the run asks itself).
  let connection: Connection;
  try {
    connection = await connections.acquire(AbortSignal.timeout(dispatchTiming.claimTimeoutMs));
  } catch {
    console.warn(JSON.stringify({ edgework: "model_dispatch_busy", key, attempt, claim_timeout_ms: dispatchTiming.claimTimeoutMs }));
    return message.ack(); // past the claim timeout: the run's alarm asks the model itself
  }
  try {
    await claimAndAsk(message, env, stub, { key, attempt }, withHeld(connections, connection));
  } finally {
    // Unused when nothing was claimed; once used, released at its response headers. A model
    // that makes no fetch (a Workers AI binding, a test model) holds it until it answers.
    connection.release();
  }
}

/** Claims the request and, when it is still wanted, asks the model (its first request on the connection held for it) and delivers the answer. */
async function claimAndAsk(
  message: Message<unknown>,
  env: Env,
  stub: RunDispatchRpc,
  { key, attempt }: Omit<DispatchMessage, "run">,
  connections: Connections,
) {
  let claimed: ClaimedRequest | null;
  try {
    claimed = await stub.claimModelRequest(key, attempt);
  } catch {
    return message.retry(); // the object could not answer: nothing was claimed
  }
  if (!claimed) return message.ack(); // a duplicate, a stale attempt, an answered or ended run
  // Renewed while the model thinks, at the lease the run granted, several times per lease: the run
  // sends the request again only when this consumer missed a whole lease of renewals (it died).
  // Refused: another attempt took over (or the run ended); the first answer delivered is the one recorded.
  const renewing = setInterval(() => {
    stub.renewModelClaim(key, attempt).then(
      (held) => held || clearInterval(renewing),
      () => undefined,
    );
  }, claimed.leaseMs / RENEWALS_PER_LEASE);
  // The model's text on its way, to the run page; whatever happens to a forward, the answer goes on.
  const interval = deltaIntervalMs(env);
  const live = interval > 0 ? new DeltaForwarder((n, text) => liveText.forward(stub, key, attempt, n, text), interval) : null;
  let answer: DeliveredAnswer;
  try {
    answer = await ask(env, claimed, connections, live ? (text) => live.push(text) : undefined);
  } finally {
    clearInterval(renewing);
    live?.close();
  }
  if (live) liveText.forwarded(key, live.stats);
  for (let i = 1; ; i++) {
    try {
      await stub.deliverModelAnswer(key, attempt, answer);
      return message.ack();
    } catch (err) {
      // After the last try the answer is lost: the claim's lease lapses and the run's alarm sends the request again.
      if (i >= DELIVERY_TRIES) {
        console.warn(JSON.stringify({ edgework: "model_dispatch_delivery_failed", key, attempt, error: messageOf(err) }));
        return message.retry();
      }
      await new Promise((r) => setTimeout(r, 200 * i));
    }
  }
}

/** The model's answer, or its failure as text (also when it takes longer than MODEL_DISPATCH_TIMEOUT_MS). */
async function ask(env: Env, claimed: ClaimedRequest, connections: Connections, onDelta: ((text: string) => void) | undefined): Promise<DeliveredAnswer> {
  const limit = dispatchTimeoutMs(env);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const model = appModels(env, claimed.models, connections)(claimed.model);
    const gaveUp = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(limit / 1000)} s`)), limit)));
    const response = await Promise.race([model.request({ ...unwire(claimed.request), ...(onDelta ? { onDelta } : {}) }), gaveUp]);
    const { text, toolCalls, usage, streamRefused } = response;
    return { ok: true, response: { text, toolCalls, usage, ...(streamRefused ? { streamRefused } : {}) } };
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  } finally {
    clearTimeout(timer);
  }
}
