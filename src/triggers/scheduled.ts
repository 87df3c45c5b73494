import { scheduleTriggers } from "../catalog";
import { checkStart, startTriggerRun } from "../runs";
import { runIdFor } from "./delivery";
import { withScheduledTime } from "./scheduled-time";
import type { ScheduledTrigger } from "./triggers-file";

export interface ScheduledStart {
  trigger: string;
  run_id: string;
  created: boolean;
}

/**
 * A Cron Trigger fired: start one run of every scheduled trigger whose
 * expression is the event's (as a string, as wrangler.toml lists it). The run id
 * derives from trigger name and scheduled time, so the same event delivered
 * twice starts each run once. Every trigger is tried; failures are thrown
 * together afterwards, so one broken trigger does not silence the others.
 */
export async function startScheduled(
  env: Env,
  event: { cron: string; scheduledTime: number },
  triggers: Iterable<ScheduledTrigger> = scheduleTriggers().values(),
): Promise<ScheduledStart[]> {
  const time = new Date(event.scheduledTime).toISOString();
  const due = [...triggers].filter((t) => t.schedule === event.cron);
  if (!due.length) console.warn(`scheduled event "${event.cron}" matches no trigger in triggers.yaml; is wrangler.toml's [triggers] crons out of date?`);
  const results = await Promise.allSettled(due.map((t) => startOne(env, t, event.cron, time)));
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${due[i]!.name}: ${(r.reason as Error)?.message ?? r.reason}`] : []));
  if (failed.length) throw new Error(`scheduled event "${event.cron}" at ${time}: ${failed.join("; ")}`);
  return results.map((r) => (r as PromiseFulfilledResult<ScheduledStart>).value);
}

async function startOne(env: Env, t: ScheduledTrigger, cron: string, time: string): Promise<ScheduledStart> {
  const checked = checkStart(t.worker, withScheduledTime(t.input, time));
  if ("status" in checked) throw new Error(checked.error);
  const id = await runIdFor(t.name, `schedule:${time}`);
  const started = await startTriggerRun(env, t, {
    id,
    checked,
    trigger: { kind: "schedule", name: t.name, cron, scheduled_time: time },
    attributes: t.attributes,
  });
  return { trigger: t.name, run_id: id, created: started.created };
}
