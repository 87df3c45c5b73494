import { describeIssues } from "../engine/json-schema";
import { checkStart } from "../runs";
import { withScheduledTime } from "../triggers/scheduled-time";
import { scheduleStub, type ScheduleAnswer, type ScheduleOrigin, type ScheduleView } from "./api";
import { scheduleSpec } from "./spec";

/**
 * Creates schedule `id` from a spec as given (the API's body, `ctx.schedule`'s argument): checked
 * (spec.ts), its worker and input checked against the catalog as a fire would be (with a sample
 * `{{scheduled_time}}`), then made by its object, which lists it (or refuses: too many).
 */
export async function createSchedule(
  env: Env,
  id: string,
  raw: unknown,
  opts: { paused?: boolean; created_by: ScheduleOrigin },
): Promise<ScheduleAnswer<{ created: boolean; view: ScheduleView }>> {
  const parsed = scheduleSpec.safeParse(raw);
  if (!parsed.success) return { ok: false, status: 400, error: describeIssues(parsed.error) };
  const spec = parsed.data;
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
