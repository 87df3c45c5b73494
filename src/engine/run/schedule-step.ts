import { messageOf, nondeterministic, propagates, RunInterrupted, ToolError } from "../errors";
import type { Journal } from "../journal/journal";
import { argsFingerprint } from "../journal/fingerprint";
import { sha256Hex } from "./idempotency-key";
import type { ScheduleCreated, ScheduledRef, Schedules } from "../types/schedule";

/** The most schedules one run's code may create (`ctx.schedule` calls that made one). */
export const MAX_SCHEDULES_PER_RUN = 10;

/** A `ctx.schedule` step's value: the host's answer and what it was asked (a hash of the spec). */
type ScheduleStep = ScheduleCreated & { fp?: number };

/** The schedule id of the `ctx.schedule` call under `key`: the same on every replay, another for every call. */
export const scheduleIdFor = (runId: string, key: string) => `run-${sha256Hex(`${runId}\n${key}`).slice(0, 32)}`;

/**
 * Creates the schedule of the call under `key` (`<call>/schedule:<n>`) once: the host's answer is
 * the step's value, a refusal too, so a replay neither creates a second schedule nor succeeds
 * where the first run was refused. The id derives from the run and the key, so a creation whose
 * answer was lost (the activation ended before the step was recorded) finds its schedule again.
 */
export async function scheduleStep(journal: Journal, schedules: Schedules | undefined, runId: string, key: string, spec: unknown): Promise<ScheduledRef> {
  const fp = argsFingerprint(spec);
  const step = await journal.step<ScheduleStep>(key, async () => {
    if (!schedules) return { ok: false, error: "this host keeps no schedules", fp };
    const made = journal.succeededEffects("schedule");
    if (made >= MAX_SCHEDULES_PER_RUN) return { ok: false, error: `this run created ${made} schedules, the most a run may (${MAX_SCHEDULES_PER_RUN})`, fp };
    return { ...(await created(schedules, scheduleIdFor(runId, key), spec)), fp };
  });
  if (step.fp !== undefined && step.fp !== fp) throw nondeterministic(key, "a ctx.schedule call with another spec", "this one");
  if (!step.ok) throw new ToolError(`ctx.schedule: ${step.error}`);
  return { id: step.id, next_fire_at: step.next_fire_at };
}

/**
 * The store's answer; no answer at all stops the activation, to be retried later: an error the
 * code could catch would make its replay (which asks again) take another path.
 */
async function created(schedules: Schedules, id: string, spec: unknown): Promise<ScheduleCreated> {
  try {
    return await schedules.create(id, spec);
  } catch (err) {
    if (propagates(err)) throw err;
    throw new RunInterrupted("retry", `ctx.schedule: no answer from the schedules' store: ${messageOf(err)}`);
  }
}
