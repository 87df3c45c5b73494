import { nondeterministic, WaitRequired, type PendingWait } from "../errors";
import { sha256Hex } from "../ids";
import type { Journal } from "../journal/journal";
import { shownDuration } from "./bounds";
import type { EventWaitResult, WaitEnd } from "../types/wait";

/** Keeps a pending wait where its end can be recorded: the run's job. Asked again on replay (the first one counts), so idempotent. */
export type WaitRecorder = (wait: PendingWait) => void | Promise<void>;

export interface WaitAsk {
  journal: Journal;
  record?: WaitRecorder;
  /** The wait's key (`<call>/wait:<n>`). */
  key: string;
  wait: Omit<PendingWait, "key" | "id">;
}

/**
 * The end of the wait at `key`: the one recorded, else the host records the
 * pending wait (once) and `WaitRequired` pauses the run; its end (written by the
 * host: a timer, an event, a timeout) lets the replay through. Like an approval
 * (approvals/ask-approval.ts), and merged with approvals of the same turn.
 */
export async function awaitWait(a: WaitAsk): Promise<WaitEnd> {
  const recorded = a.journal.get<WaitEnd>(a.key);
  if (recorded) {
    const now = waitLabel(a.wait);
    if (recorded.wait !== undefined && recorded.wait !== now) throw nondeterministic(a.key, `a wait for ${recorded.wait}`, `a wait for ${now}`);
    return recorded;
  }
  const pending: PendingWait = { ...a.wait, key: a.key, id: await waitId(a.key), workerChain: [...a.wait.workerChain] };
  await a.record?.(pending);
  throw new WaitRequired([pending]);
}

/** Stable id of a wait, from its key (a replay finds the same wait). */
export async function waitId(key: string): Promise<string> {
  return `wt_${(await sha256Hex(key)).slice(0, 24)}`;
}

/** A recorded end as `ctx.waitForEvent` returns it. */
export function eventWaitResult(end: WaitEnd, name: string): EventWaitResult {
  if (end.ended === "event") return { status: "received", id: end.id, payload: end.payload };
  const after = end.ended === "timeout" ? shownDuration(end.after_ms) : "its deadline";
  return { status: "timed_out", message: `timed out after ${after}: no event "${name}" arrived` };
}

/** What a wait waits for, as its recorded end names it: `sleep`, or `event:<name>`. */
export const waitLabel = (w: Pick<PendingWait, "kind" | "name">) => (w.kind === "event" ? `event:${w.name ?? ""}` : "sleep");
