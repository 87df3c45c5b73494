import type { ApprovalMode, Budget, Usage } from "../engine";
import type { CallNode } from "../engine/journal/call-tree";

/** Every status a run can have, in lifecycle order (filters, pages). */
export const RUN_STATUSES = ["queued", "running", "awaiting_approval", "waiting", "succeeded", "failed", "cancelled"] as const;
export type RunStatusName = (typeof RUN_STATUSES)[number];
/** Paused: for a person (`awaiting_approval`) or for the world (`waiting`: timers, events); the run holds one alarm. */
export const PAUSED: readonly RunStatusName[] = ["awaiting_approval", "waiting"];
export const TERMINAL: readonly RunStatusName[] = ["succeeded", "failed", "cancelled"];

export interface StartRun {
  id: string;
  worker: string;
  input: unknown;
  approvalMode: ApprovalMode;
  budget: Budget;
  /** What started the run (API, webhook delivery…), shown to approvers. */
  trigger?: unknown;
}

export interface ApprovalView {
  id: string;
  status: "pending" | "approved" | "rejected" | "expired" | "voided";
  tool: string;
  args: unknown;
  description: string;
  worker_chain: string[];
  call_path: string;
  notify: string | null;
  note: string | null;
  decided_by: string | null;
  created_at: number;
  decided_at: number | null;
  expires_at: number;
}

/** A durable wait the run is paused on (ctx.sleep, ctx.waitForEvent, the `wait` kind). */
export interface WaitView {
  id: string;
  kind: "sleep" | "event";
  /** The event's name (kind `event`). */
  name?: string;
  /** The correlation key a signal trigger wakes it by. */
  key?: string;
  /** When a sleep wakes (kind `sleep`). */
  until?: number;
  /** When it ends by itself: the wake-up, or the event wait's timeout. */
  expires_at: number;
  reason?: string;
  call_path: string;
  worker_chain: string[];
  created_at: number;
}

export interface RunView {
  id: string;
  worker: string;
  status: RunStatusName;
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  usage: Usage | null;
  approval_mode: ApprovalMode;
  trigger: unknown;
  created_at: number;
  updated_at: number;
  /** The catalog version the run started on and runs on (null: started before runs were pinned). */
  catalog_version: string | null;
  approvals: ApprovalView[];
  /** What the run waits for now (empty unless it is paused on a timer or an event). */
  waits: WaitView[];
  call_tree: CallNode | null;
}

export interface RunEvent {
  /** `<journal seq>-<event seq>`: the cursor after this event, for Last-Event-ID. */
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** RPC answers that can fail carry an HTTP-like status instead of throwing across RPC. */
export type Answer<T = Record<string, never>> = ({ ok: true } & T) | { ok: false; status: 403 | 404 | 409 | 410 | 413 | 429; error: string };

/** An event for a run (`POST /runs/:id/events/:name`, a signal trigger), checked by the app (src/runs/events.ts). */
export interface EventDelivery {
  name: string;
  /** The delivery id: a second delivery of one id changes nothing. */
  id: string;
  payload: unknown;
  /** The correlation key (a signal's): only waits without a key or with this one take it. */
  key?: string;
}

/** What a delivered event did: taken by a wait (`applied`), kept for a later wait (`buffered`), or a repeat of an id (`duplicate`). */
export interface EventOutcome {
  applied: boolean;
  buffered: boolean;
  duplicate: boolean;
}

/** A decision on an approval, by API, page or emailed reply. */
export interface DecisionRequest {
  decision: "approve" | "reject";
  note?: string;
  by: string;
  remember?: boolean;
  /** Set for an emailed reply: its sender, which must be an address the approval was emailed to. */
  replyFrom?: string;
}

/** A piece of model text as it streams (direct dispatch), for watchers of the run page. */
export interface ModelDelta {
  /** Increases by one per piece; watchers ask for pieces after the last one they saw. */
  seq: number;
  /** One model request of this activation: pieces of one answer share it. */
  stream: number;
  text: string;
}
