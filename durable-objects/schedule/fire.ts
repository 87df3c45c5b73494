/**
 * One fire of a runtime schedule: a run of its worker with its input (`{{scheduled_time}}` filled
 * in) and attributes, checked against the catalog as deployed now. The run's id derives from the
 * schedule and the fire's instant, so a fire retried (an alarm cut off after the start) starts
 * the run once.
 */

import { isoInstant } from "../../src/engine/iso-time";
import { checkStart, startRun } from "../../src/runs";
import type { ScheduleSpec } from "../../src/schedules/spec";
import { withScheduledTime } from "../../src/triggers/scheduled-time";

/** A fire's run id (`at`: the instant it was due; a fire by hand: `now_<uuid>`). */
export const fireRunId = (schedule: string, at: number | string) => `sched_${schedule}_${at}`;

/** Starts the run of one fire; a refusal (the worker is gone, its input no longer fits) is a value, a lost RPC throws. */
export async function startFire(
  env: Env,
  schedule: { id: string; spec: ScheduleSpec },
  at: number,
  runId: string,
): Promise<{ ok: true; created: boolean } | { ok: false; error: string }> {
  const time = isoInstant(at) ?? new Date(0).toISOString();
  const checked = checkStart(schedule.spec.worker, withScheduledTime(schedule.spec.input, time));
  if ("status" in checked) return { ok: false, error: checked.error };
  const started = await startRun(env, {
    id: runId,
    worker: checked.worker.name,
    input: checked.input,
    approvalMode: schedule.spec.approval_mode,
    budget: {},
    trigger: { kind: "schedule", name: schedule.id, scheduled_time: time },
    attributes: schedule.spec.attributes,
  });
  return { ok: true, created: started.created };
}
