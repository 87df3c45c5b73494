import { checkEvent, deliverEvent } from "../runs/events";
import { waitIndex } from "../runs/rpc";
import { resolvePointer } from "./json-pointer";
import type { SignalTrigger } from "./triggers-file";

/** The most runs one signal wakes (those waiting for its event under its key). */
export const MAX_SIGNALLED_RUNS = 1000;
/** Runs told at once: a signal's fan-out never opens more calls than this. */
const BATCH = 50;

/**
 * A verified signal delivery: the event for every run waiting for it under the
 * payload's correlation key, found through the index object of that (event, key)
 * alone. `id` (what makes the delivery one delivery) is the event's id, so a run that
 * took it once takes it never again. Runs that no longer wait for it (ended, or none of
 * their waits is for it) leave the index; one that took it stays, since it may already wait
 * again under the key (its entry ends with its deadline, or at the next signal it does not
 * take); a run that could not be reached stays, for the sender's retry.
 */
export async function signalWaitingRuns(
  env: Env,
  t: SignalTrigger,
  payload: unknown,
  id: string,
): Promise<{ woken: number } | { status: 400 | 413; error: string }> {
  const key = resolvePointer(payload, t.signal.key);
  if (typeof key !== "string" && typeof key !== "number") return { status: 400, error: `signal.key ${t.signal.key} is not a string or number in the payload` };
  const ev = checkEvent(t.signal.event, { id, payload, key: String(key) });
  if ("status" in ev) return ev;
  const index = await waitIndex(env, ev.name, ev.key!);
  // Kept there a while: a run whose wait was asked but not yet registered takes it when it registers.
  const runs = await index.waiting(Date.now(), MAX_SIGNALLED_RUNS, ev);
  let woken = 0;
  const answered: string[] = [];
  for (let i = 0; i < runs.length; i += BATCH) {
    const batch = runs.slice(i, i + BATCH);
    const answers = await Promise.allSettled(batch.map((run) => deliverEvent(env, run, ev, false)));
    answers.forEach((a, j) => {
      if (a.status === "rejected") return;
      if (a.value.ok && a.value.applied) woken++;
      // Only a run that no longer waits here leaves the index: one that took the event now may
      // already wait again under the key (registered under the same entry prefix), as may one
      // that took it before (a redelivery) and says it waits.
      if (!a.value.ok || !(a.value.applied || a.value.waiting)) answered.push(batch[j]!);
    });
  }
  if (answered.length) await index.forget(answered);
  return { woken };
}
