import { RUN_ID } from "../runs";

/** What a Slack trigger records as the run's trigger: who started it, and the thread it converses in. */
export interface SlackThreadTrigger {
  kind: "slack";
  name: string;
  /** `slack:<user id>`: the run's initiator (they may not approve its calls; only they continue it). */
  initiator: string;
  channel: string;
  thread_ts: string;
}

/**
 * The run a Slack thread is: its id made from the conversation and the thread's first message
 * (`slack_<channel>_<ts>`), so a reply finds its run without a lookup table, and the same thread
 * is always the same run. Null when the parts do not make a run id.
 */
export function threadRunId(channel: string, threadTs: string): string | null {
  const id = `slack_${channel}_${threadTs.replace(".", "_")}`;
  return /^[A-Z0-9]{1,40}$/.test(channel) && /^[0-9]{1,12}\.[0-9]{1,8}$/.test(threadTs) && RUN_ID.test(id) ? id : null;
}

/** The thread a run's trigger names, when a Slack trigger started it. */
export function slackThread(trigger: unknown): SlackThreadTrigger | null {
  const t = (trigger ?? {}) as Partial<SlackThreadTrigger>;
  return t.kind === "slack" && typeof t.channel === "string" && typeof t.thread_ts === "string" && typeof t.initiator === "string"
    ? (t as SlackThreadTrigger)
    : null;
}
