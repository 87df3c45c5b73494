import type { ApprovalDecision } from "../approvals/ask-approval";
import type { WaitEnd } from "../types/wait";
import { isoInstant } from "../iso-time";
import type { SpanEvent, SpanValue } from "./span";

/**
 * What the host kept of a wait when it was asked (its `waits` row; a question's
 * approval row): its times, and an event wait's name and correlation key. Not in the
 * journal, which holds only the wait's end.
 */
export interface WaitAsked {
  since: number;
  /** A sleep's wake-up, an event wait's timeout, a question's expiry. */
  until: number;
  name?: string;
  correlation?: string;
  /** When it ended, for an end that does not say (a question's decision). */
  endedAt?: number;
}

/**
 * One durable wait as two span events: `edgework.wait.started` when it was asked
 * (what for, until when) and `edgework.wait.ended` when it ended, and how: `elapsed`
 * (a sleep), `delivered` or `timed_out` (an event wait), `answered` or `expired` (a
 * question). `end` is its recorded step (a `WaitEnd`, a question's decision); without
 * `asked` only the end is known, at `fallbackAt` for a question. The correlation key is
 * data a caller chose: kept only with content.
 */
export function waitEvents(kind: "wait" | "question", end: unknown, asked: WaitAsked | undefined, fallbackAt: number, captureContent: boolean): SpanEvent[] {
  const ended = kind === "wait" ? waitEnded(end as WaitEnd) : questionEnded(end as ApprovalDecision, asked?.endedAt ?? fallbackAt);
  // A grammar-1 step named like a wait (its name was raw) holds something else: no wait.
  if (!ended) return [];
  const events: SpanEvent[] = [];
  if (asked) {
    const attributes: Record<string, SpanValue> = { "edgework.wait.kind": ended.kind, "edgework.wait.until": isoInstant(asked.until) ?? asked.until };
    if (asked.name !== undefined) attributes["edgework.wait.name"] = asked.name;
    if (captureContent && asked.correlation !== undefined) attributes["edgework.wait.key"] = asked.correlation;
    events.push({ name: "edgework.wait.started", at: asked.since, attributes });
  }
  events.push({ name: "edgework.wait.ended", at: ended.at, attributes: { "edgework.wait.kind": ended.kind, "edgework.wait.outcome": ended.outcome } });
  return events;
}

function waitEnded(end: WaitEnd): { kind: string; outcome: string; at: number } | undefined {
  if (typeof end?.at !== "number" || !["time", "event", "timeout"].includes(end.ended)) return undefined;
  if (end.ended === "time") return { kind: "sleep", outcome: "elapsed", at: end.at };
  return { kind: "event", outcome: end.ended === "event" ? "delivered" : "timed_out", at: end.at };
}

/** As ask-human.ts reads a decision: an answer, or else an expiry. */
function questionEnded(decision: ApprovalDecision, at: number): { kind: string; outcome: string; at: number } | undefined {
  if (typeof decision?.approved !== "boolean") return undefined;
  return { kind: "question", outcome: decision.approved && typeof decision.answer === "string" ? "answered" : "expired", at };
}
