/**
 * What the HTTP API sends and takes, declared here (not imported from the server)
 * so the client bundles for browsers without pulling server code.
 * Field names are the wire's: responses as the routes return them.
 */

/** `awaiting_approval`: paused for a person; `waiting`: paused for a timer or an event (see `Run.waits`). */
export type RunStatus = "queued" | "running" | "awaiting_approval" | "waiting" | "succeeded" | "failed" | "cancelled";

/** Statuses a run never leaves. */
export const TERMINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "cancelled"];

export type ApprovalMode = "ask" | "approve_all" | "reject_all";

/** Tokens and requests used by a model call, a worker call or a whole run. */
export interface Usage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface Budget {
  maxTokens?: number;
  maxCostUsd?: number;
  /** `ask`: pause for the run's approver to extend the budget. Default `fail`. */
  onExceed?: "fail" | "ask";
}

export interface StartRunParams {
  /** A worker's or code function's name (`GET /workers`). */
  worker: string;
  /** Matching the worker's input schema; a string means `{input: "…"}` for default-schema workers. */
  input: unknown;
  approvalMode?: ApprovalMode;
  budget?: Budget;
}

/** `POST /runs` → 202. */
export interface StartedRun {
  id: string;
  status_url: string;
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

export interface AttachmentRecord {
  ref: string;
  name: string;
  type: string;
  size: number;
  sha256: string;
}

export interface ToolNode {
  id: string;
  name: string;
  path: string;
  args: unknown;
  /** `pending`: no result yet (running, or waiting for approval). */
  status: "ok" | "error" | "pending";
  /** The result, cut to 500 characters of JSON. */
  result?: string;
  error?: string;
  /** Set when the outcome was cut to fit the journal: its full size in bytes. */
  truncatedFrom?: number;
  attachments?: AttachmentRecord[];
  calls: CallNode[];
}

export interface CallNode {
  worker: string;
  path: string;
  turns: number;
  usage: Usage;
  tools: ToolNode[];
}

/** A durable wait a run is paused on (ctx.sleep, ctx.waitForEvent, the `wait` kind). */
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

/** `POST /runs/:id/events/:name`'s body: the event's payload (≤ 64 KiB as JSON), its id (same id twice: once), a correlation key. */
export interface SendEventParams {
  payload: unknown;
  id?: string;
  key?: string;
}

/** `POST /runs/:id/events/:name` → 202: taken by a wait (`applied`), kept for the next one (`buffered`), or a repeat (`duplicate`). */
export interface SentEvent {
  id: string;
  applied: boolean;
  buffered: boolean;
  duplicate: boolean;
}

/** `GET /runs/:id`. */
export interface Run {
  id: string;
  worker: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  usage: Usage | null;
  approval_mode: ApprovalMode;
  /** What started the run (`{kind: "api"}`, a webhook delivery…). */
  trigger: unknown;
  created_at: number;
  updated_at: number;
  catalog_version: string | null;
  approvals: ApprovalView[];
  /** What the run waits for now: empty unless it is paused on a timer or an event. */
  waits: WaitView[];
  call_tree: CallNode | null;
}

export interface ListRunsQuery {
  status?: RunStatus;
  worker?: string;
  /** A trigger kind (`api`, `webhook`) or a trigger's name. */
  trigger?: string;
  /** Epoch ms, an ISO date, or a Date. */
  since?: number | string | Date;
  /** 1–200, default 50. */
  limit?: number;
  /** A previous page's `next_cursor`. */
  cursor?: string;
}

export interface RunListItem {
  id: string;
  worker: string;
  status: RunStatus;
  trigger: { kind: string; name?: string };
  created_at: number;
  updated_at: number;
  usage: Usage | null;
}

/** `GET /runs`: one page, newest first; `next_cursor` null on the last. */
export interface RunPage {
  runs: RunListItem[];
  next_cursor: string | null;
}

/** `POST /runs/:id/cancel`. */
export interface CancelledRun {
  id: string;
  status: "cancelled";
}

/** `POST /runs/:id/resume`. */
export interface ResumedRun {
  id: string;
  status: RunStatus;
  resumed: true;
}

export interface PendingApproval {
  run_id: string;
  worker: string;
  approval_id: string;
  tool: string;
  worker_chain: string[];
  created_at: number;
  expires_at: number;
  age_seconds: number;
  expires_in_seconds: number;
}

/** `GET /approvals?status=pending`: oldest first, at most 1000 (`truncated` when there are more). */
export interface PendingApprovals {
  approvals: PendingApproval[];
  truncated: boolean;
}

export interface DecideParams {
  decision: "approve" | "reject";
  /** At most 2000 characters. */
  note?: string;
}

/** `POST /runs/:id/approvals/:approvalId`. */
export interface Decision {
  approval_id: string;
  approved: boolean;
}

/** One entry of `GET /workers`. */
export interface WorkerInfo {
  name: string;
  description: string;
  /** JSON Schema of the worker's input (its tool parameters). */
  parameters: Record<string, unknown>;
  file: string;
  model: string | null;
  calls_workers: string[];
}

export interface WorkerList {
  workers: WorkerInfo[];
}
