import { scheduleTriggers } from "../catalog";
import { checkStart, startTriggerRun } from "../runs";
import { runIdFor } from "./delivery";
import { withScheduledTime } from "./scheduled-time";
import type { ScheduledTrigger } from "./triggers-file";
import { runNotify } from "../notify/run-notify";
import { flowObjectName } from "./flow/key";
import type { FlowAnswer } from "./flow/outcome";
import { flowKeyObject } from "./flow/rpc";

export interface ScheduledStart {
  trigger: string;
  /** The run it started, or (concurrency) the run that has the trigger; absent when it waits in the trigger's line. */
  run_id?: string;
  created: boolean;
  /** With `concurrency`: what the trigger's key object did with the firing (src/triggers/flow/outcome.ts). */
  outcome?: FlowAnswer;
}

/**
 * A Cron Trigger fired: start one run of every scheduled trigger whose
 * expression is the event's (as a string, as wrangler.toml lists it). The run id
 * derives from trigger name and scheduled time, so the same event delivered
 * twice starts each run once. A trigger with `concurrency` hands the firing to its key's
 * object, which starts it, or queues, skips or replaces as the trigger says. Every trigger
 * is tried; failures are thrown together afterwards, so one broken trigger does not
 * silence the others.
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
  const record = { kind: "schedule", name: t.name, cron, scheduled_time: time };
  if (t.concurrency) {
    // The trigger is its one key: a firing while its runs work is queued, skipped or replaces one, as it says.
    const outcome = await flowKeyObject(env, await flowObjectName(t.name, [])).deliver({
      trigger: t.name,
      key: [],
      id: `schedule:${time}`,
      input: checked.input,
      record,
      attributes: t.attributes,
    });
    return { trigger: t.name, ...("run_id" in outcome ? { run_id: outcome.run_id } : {}), created: "started" in outcome && !outcome.duplicate, outcome };
  }
  const id = await runIdFor(t.name, `schedule:${time}`);
  // A notify URL the vars refuse is the operator's to fix: the run starts, and the log says why nobody hears of it.
  const hook = runNotify(env, t, { file: "triggers.yaml", field: `${t.name}.notify_url` });
  if ("error" in hook) console.warn(`trigger ${t.name}: its runs notify nobody: ${hook.error}`);
  const notify = "url" in hook && hook.url ? { url: hook.url } : undefined;
  const started = await startTriggerRun(env, t, { id, checked, trigger: record, notify, attributes: t.attributes });
  return { trigger: t.name, run_id: id, created: started.created };
}
