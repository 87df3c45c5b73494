/**
 * What a flow key's decision does to runs (decide.ts): start one (after cancelling the
 * run it replaces), give the delivery to the key's run as a message or an event. Every
 * call is idempotent — a start by the run id derived from the delivery, a message or an
 * event by an id derived from it, a cancel of a run that ended refused — so an act cut
 * off and done again changes nothing twice. `ended`: the run the delivery was for has
 * ended (it answered so): the key starts a new run for it instead.
 */

import { checkStart, runStub, startRun } from "../../src/runs";
import { budgetOf } from "../../src/engine/catalog/worker-file";
import { runNotify } from "../../src/notify/run-notify";
import { messageText } from "../../src/triggers/flow/message-text";
import type { FlowOutcome } from "../../src/triggers/flow/outcome";
import type { ScheduledTrigger, Trigger } from "../../src/triggers/triggers-file";
import type { Item, KeyMeta } from "./key-store";

export type Acted = FlowOutcome | "ended";

/** A trigger with flow control: a webhook's, or a schedule's concurrency (its key is the trigger). */
export type FlowTrigger = Trigger | ScheduledTrigger;

/** Starts the item's run; `cancel`: the key's oldest run, replaced by it (a cancel with the reason on its event). */
export async function startFor(env: Env, t: FlowTrigger, meta: KeyMeta, item: Item, cancel?: string): Promise<Acted> {
  const checked = checkStart(t.worker, item.input);
  if ("status" in checked) return { failed: true, error: checked.error };
  if (cancel) {
    // A run that ended meanwhile answers 409: there is nothing left to replace.
    await runStub(env, cancel).cancel(`replaced by run ${item.run}: a newer delivery for its key (trigger ${t.name}, on_busy: replace)`);
  }
  const hook = runNotify(env, t, { file: "triggers.yaml", field: `${t.name}.notify_url` });
  if ("error" in hook) console.warn(`trigger ${t.name}: its runs notify nobody: ${hook.error}`);
  await startRun(env, {
    id: item.run,
    worker: checked.worker.name,
    input: checked.input,
    approvalMode: t.approval_mode,
    budget: budgetOf(t.budget),
    trigger: { ...item.record, key: meta.key },
    notify: { flow: meta.name, ...("url" in hook ? { url: hook.url } : {}) },
    attributes: item.attributes,
  });
  return { run_id: item.run, started: true, ...(cancel ? { replaced: [cancel] } : {}) };
}

/** The item to the key's run as the conversation's next message (`on_busy: message`). */
export async function messageTo(env: Env, run: string, item: Item): Promise<Acted> {
  const answer = await runStub(env, run).followUp(messageText(item.input), item.eventId);
  if (answer.ok) return { run_id: run, messaged: true };
  // 410: it has answered and ended; 404: retention deleted it.
  if (answer.status === 410 || answer.status === 404) return "ended";
  return { failed: true, error: `run ${run} refused the message: ${answer.error}` };
}

/** The item to the key's run as the event `name` (`on_busy: {event}`): taken by a wait for it, or kept for the next. */
export async function eventTo(env: Env, run: string, name: string, item: Item): Promise<Acted> {
  const answer = await runStub(env, run).deliverEvent({ name, id: item.eventId, payload: item.input }, true);
  if (answer.ok) return { run_id: run, event: name };
  // deliverEvent's 409 is an ended run (durable-objects/run/waits.ts); 404: retention deleted it.
  if (answer.status === 409 || answer.status === 404) return "ended";
  return { failed: true, error: `run ${run} refused the event: ${answer.error}` };
}
