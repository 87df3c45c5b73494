import type { Decider, RunStatus } from "./types";

/**
 * The events of `GET /runs/:id/events`, by type. `id` is the event's own cursor
 * (pass it as `lastEventId` to get only what follows it); `model_delta` events
 * have none (they are not persisted).
 */
interface TypedEvent<T extends string, D> {
  id: string;
  type: T;
  data: D;
}

type RunLifecycle = Exclude<RunStatus, "failed"> | "checkpoint";

export type RunEvent =
  | TypedEvent<`run_${RunLifecycle}`, Record<string, unknown>>
  | TypedEvent<"run_failed", { error: { code: string; message: string } }>
  | TypedEvent<"run_retry", { detail: string; attempt: number }>
  /** The stuck-run sweep found the run queued or running with no alarm (the platform dropped it) and woke it: wake-up `attempt` of `of`. */
  | TypedEvent<"run_swept", { attempt: number; of: number }>
  | TypedEvent<"call", { path: string; worker: string }>
  | TypedEvent<
      "turn",
      {
        path: string;
        turn: number;
        text: string | null;
        tool_calls: Array<{ id: string; name: string }>;
        usage: { inputTokens: number; outputTokens: number };
        cost_usd: number;
        /** Live text was asked for, but the model's provider refused to stream: this answer came whole, without it. */
        stream_refused?: true;
      }
    >
  | TypedEvent<"tool", { path: string; ok: boolean; result?: string; error?: string; truncated_from?: number }>
  | TypedEvent<"approval_requested", { approval_id: string; tool: string; worker_chain: string[]; description: string }>
  | TypedEvent<
      "approval_recorded",
      { approval_id: string; status: "approved" | "rejected" | "responded" | "expired"; by: string; decider?: Decider; edited?: true }
    >
  | TypedEvent<"approval_notified", { path: string } & Record<string, unknown>>
  /** `edited`: the call ran with a person's arguments (on the run); `responded`: a person answered in its place, and it never ran. */
  | TypedEvent<"approval_decided", { path: string; approved: boolean; by: string; decider?: Decider; note: string | null; edited?: true; responded?: true }>
  | TypedEvent<"approval_emailed" | "approval_reminder_emailed" | "approval_escalation_emailed", { approval_id: string; to: string }>
  | TypedEvent<"approval_email_failed", { approval_id: string; kind: string; to: string; error: string; code: string; retry: boolean }>
  /** An email trigger with `reply: true`: the answer to message `message` was mailed back, or a send failed (`retry`: it is tried again). */
  | TypedEvent<"answer_emailed", { message: number; to: string; message_id?: string }>
  | TypedEvent<"answer_email_failed", { message: number; error: string; code: string; retry: boolean }>
  | TypedEvent<"event_dropped", { id: string; name: string; reason: string }>
  /** Messages that waited their turn, dropped when the run failed or was cancelled (their numbers). */
  | TypedEvent<"messages_dropped", { messages: number[]; reason: string }>
  /** A completion webhook's attempt: delivered, or failed (`retry`: it is tried again). `to`: the URL's origin. */
  | TypedEvent<"notify_sent", { event_id: string; to: string; status: number; attempt: number }>
  | TypedEvent<"notify_failed", { event_id: string; to: string; status?: number; error: string; attempt: number; retry: boolean }>
  /** The history of worker call `path` was compacted before turn `turn` (`context:`): `replaced` messages gave way to a summary or a note. */
  | TypedEvent<
      "history_compacted",
      { path: string; turn: number; compact: "summarize" | "window"; replaced: number; tokens_before: number; tokens_after: number; model?: string }
    >
  | TypedEvent<"step", { key: string }>
  | { id: null; type: "model_delta"; data: { stream: number; text: string } }
  /** A type this client does not know (a newer server): its name in `event`. */
  | { id: string | null; type: "other"; event: string; data: unknown };

export type RunEventType = RunEvent["type"];

const KNOWN = new Set<string>([
  "run_queued",
  "run_running",
  "run_awaiting_approval",
  "run_waiting",
  "run_succeeded",
  "run_failed",
  "run_cancelled",
  "run_cancelling",
  "run_checkpoint",
  "run_retry",
  "run_swept",
  "call",
  "turn",
  "tool",
  "approval_requested",
  "approval_recorded",
  "approval_notified",
  "approval_decided",
  "approval_emailed",
  "approval_reminder_emailed",
  "approval_escalation_emailed",
  "approval_email_failed",
  "answer_emailed",
  "answer_email_failed",
  "event_dropped",
  "messages_dropped",
  "notify_sent",
  "notify_failed",
  "history_compacted",
  "step",
  "model_delta",
]);

/** The server's last event of a run's stream: the run has ended and every event was sent (never yielded). */
export const END_EVENT = "end";

/** A parsed SSE message as a typed event (the server's data is trusted to match its type). */
export function toRunEvent(event: string, id: string | null, data: unknown): RunEvent {
  if (!KNOWN.has(event)) return { id, type: "other", event, data };
  return { id, type: event, data } as RunEvent;
}
