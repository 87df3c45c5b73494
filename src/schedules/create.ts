import { describeIssues } from "../engine/json-schema";
import { checkStart } from "../runs";
import { withScheduledTime } from "../triggers/scheduled-time";
import { scheduleStub, type ScheduleAnswer, type ScheduleOrigin, type ScheduleView } from "./api";
import { scheduleSpec, type ScheduleSpec } from "./spec";

/**
 * Creates schedule `id` from a spec as given (the API's body, `ctx.schedule`'s argument): checked
 * (spec.ts), its worker and input checked against the catalog as a fire would be (with a sample
 * `{{scheduled_time}}`), then made by its object, which lists it (or refuses: too many).
 */
export async function createSchedule(
  env: Env,
  id: string,
  raw: unknown,
  opts: { paused?: boolean; created_by: ScheduleOrigin; creator_approval_mode?: ScheduleSpec["approval_mode"] },
): Promise<ScheduleAnswer<{ created: boolean; view: ScheduleView }>> {
  const parsed = scheduleSpec.safeParse(raw);
  if (!parsed.success) return { ok: false, status: 400, error: describeIssues(parsed.error) };
  const spec = parsed.data;
  // approve_all is granted with the API token when a run starts: a run's code (whose spec a model may have written) never grants more than its run has.
  if (spec.approval_mode === "approve_all" && opts.creator_approval_mode !== undefined && opts.creator_approval_mode !== "approve_all")
    return {
      ok: false,
      status: 400,
      error: `approval_mode: approve_all is refused: the run's own approval_mode is ${opts.creator_approval_mode}, and a run's schedule approves no more than its run`,
    };
  const checked = checkStart(spec.worker, withScheduledTime(spec.input, new Date(0).toISOString()));
  if ("status" in checked) return { ok: false, status: 400, error: checked.error };
  if (!env.SCHEDULES || !env.SCHEDULE_INDEX)
    return {
      ok: false,
      status: 409,
      error: "this deployment has no SCHEDULES and SCHEDULE_INDEX bindings (ScheduleDO, ScheduleIndexDO): add them to wrangler.toml",
    };
  return scheduleStub(env, id).create({ id, spec, paused: opts.paused ?? false, created_by: opts.created_by });
}
