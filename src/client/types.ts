/**
 * What the HTTP API sends and takes, declared here (not imported from the server)
 * so the client bundles for browsers without pulling server code.
 * Field names are the wire's: responses as the routes return them.
 */

/** `awaiting_approval`: paused for a person to approve or reject a call; `waiting`: paused for a timer, an event or an answer to a question (see `Run.waits`). */
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
  /** A completion webhook: the run's end (and with `notifyOn: ["ended", "paused"]` its pauses) posted there, signed (docs/triggers.md). */
  notifyUrl?: string;
  notifyOn?: Array<"ended" | "paused">;
  /** What finds the run in listings (`runs.list({ attributes })`): at most 10; names a-z 0-9 _, values 1–256 characters (numbers and booleans kept as text). */
  attributes?: Record<string, string | number | boolean>;
  /**
   * Sent as `Idempotency-Key` (1–255 visible ASCII characters): the same key and body within
   * 24 h name the same run. Default: a new random key per `start` call, the same on each of its
   * retries. Pass your own (e.g. your job's id) to make starts repeated across processes safe too.
   */
  idempotencyKey?: string;
}

/** `POST /runs` → 202 (200 for a repeat with the same `Idempotency-Key`). */
export interface StartedRun {
  id: string;
  status_url: string;
}

/** Who decided an approval and how; `email` is null for the API token (and sessions signed in with it). */
export interface Decider {
  email: string | null;
  via: "link" | "reply" | "inbox" | "api" | "access";
}

export interface ApprovalView {
  id: string;
  /** `question`: a question to a person, answered with text; else a call's approval. */
  kind: "approval" | "question";
  /** `responded`: a person answered in place of the call, which never ran (`response`). */
  status: "pending" | "approved" | "rejected" | "responded" | "expired" | "voided";
  tool: string;
  /** The arguments as asked (the model's); an edit is `edited_args`. */
  args: unknown;
  description: string;
  worker_chain: string[];
  call_path: string;
  notify: string | null;
  /** Who may decide it, when its policy names people. */
  deciders: { ask: string[] | null; allow_initiator: boolean } | null;
  note: string | null;
  /** A question's answer, once answered. */
  answer: string | null;
  decided_by: string | null;
  /** The person who decided and how (null: undecided, or no person decided: an expiry, the run's mode). */
  by: Decider | null;
  /** Whether an approver may edit its arguments or answer in its place (not when its policy says `editable: false`). */
  editable: boolean;
  /** The tool's input schema an edit is checked against, while it is pending and editable; else null. */
  input_schema: Record<string, unknown> | null;
  /** The arguments the call ran with when an approver edited them before approving; else null. */
  edited_args: unknown;
  /** The result an approver gave in place of the call (status `responded`); else null. */
  response: string | null;
  /** SHA-256 (32 hex digits) of the asked arguments the decision is bound to; null while pending or for a budget's. */
  args_sha256: string | null;
  created_at: number;
  decided_at: number | null;
  expires_at: number;
  /** Its emails that were not delivered (request, reminder, escalation), and why; `retrying`: another attempt is planned. */
  email_failures: Array<{
    kind: "request" | "reminder" | "escalation";
    to: string;
    reason: string;
    code: string;
    retrying: boolean;
    attempts: number;
    at: number;
  }>;
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
  /** Set when a person edited the call before approving it: the arguments it ran with (`args`: the model's), and who. */
  edited?: { args: unknown; by: Decider | null };
  /** Set when a person answered in place of the call (it never ran): the result is theirs. */
  answeredBy?: { by: Decider | null };
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

/** Something a run is paused on that ends by itself: a durable wait (ctx.sleep, ctx.waitForEvent, the `wait` kind) or a question to a person (ctx.askHuman, the `human` kind). */
export interface WaitView {
  /** The wait's id; a question's id (as in `approvals`). */
  id: string;
  kind: "sleep" | "event" | "question";
  /** The event's name (kind `event`); the question's id (kind `question`: `approvals.answer(runId, name, text)` answers it). */
  name?: string;
  /** The correlation key a signal trigger wakes it by. */
  key?: string;
  /** When a sleep wakes (kind `sleep`). */
  until?: number;
  /** When it ends by itself: the wake-up, the event wait's timeout, the question's expiry ("no answer"). */
  expires_at: number;
  /** Why it waits, as the code or the model said; a question's text (both cut to 300 characters). */
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
  /** Its attributes: those it started with, under those its code set (`ctx.setAttribute`). */
  attributes: Record<string, string>;
  created_at: number;
  updated_at: number;
  /** The catalog version the run started on and runs on (null: started before runs were pinned). */
  catalog_version: string | null;
  /** The edgework package version the run started under (null: started before versions were recorded). */
  edgework_version: string | null;
  /** The version of its latest activation, once one ran under another version than it started under; else null. */
  resumed_under: string | null;
  approvals: ApprovalView[];
  /** What the run waits for now besides approvals (timers, events, open questions); empty once it ended. */
  waits: WaitView[];
  call_tree: CallNode | null;
  /** The run and journal step this run was forked from (`POST /runs/:id/fork`), or null. */
  forked_from: { run: string; at: string } | null;
  /** When each worker call, model request, tool call and pause began and ended (ms since the epoch), with totals. */
  timeline: RunTimeline;
  /** The conversation with the root worker: the input, each message sent since (`runs.sendMessage`), each answer. */
  messages: Array<{ role: "user" | "assistant"; text: string; at: number }>;
  /** A conversation by email: answers that could not be mailed back, and why. */
  answer_email_failures: Array<{ message: number; reason: string; code: string; at: number }>;
}

/** `POST /runs/:id/messages`: the run answers message number `message` (the input is 1). */
export interface SentMessage {
  id: string;
  /** `running`; for a message that waits its turn, or whose `id` the run took before, the run's status as it is. */
  status: RunStatus;
  /** Its number in the conversation (the input is 1). */
  message: number;
  /** The run took a message with this `id` before: nothing new. */
  duplicate?: true;
  /** The run is still working: the message waits its turn, and is answered after the answer in progress. */
  waiting?: true;
}

/** `GET /runs/:id`'s `timeline`: the run page's waterfall. */
export interface RunTimeline {
  start: number;
  end: number;
  /** In call order; `depth`: nesting under the root worker; `open`: not ended yet. */
  spans: Array<{ kind: "worker" | "model" | "tool" | "pause"; label: string; path: string; depth: number; start: number; end: number; open?: boolean }>;
  /** Spans left out past 400. */
  omitted: number;
  totals: { model_ms: number; tool_ms: number; paused_ms: number; wall_ms: number };
}

export interface ListRunsQuery {
  status?: RunStatus;
  worker?: string;
  /** A trigger kind (`api`, `webhook`) or a trigger's name. */
  trigger?: string;
  /** Epoch ms, an ISO date, or a Date. */
  since?: number | string | Date;
  /** Each attribute has exactly this value (sent as `attr.<name>`); at most 3, the first walked: give the rarest first. */
  attributes?: Record<string, string>;
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
  attributes: Record<string, string>;
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
/** `POST /runs/:id/fork`'s parameters: `at` a key from `GET /runs/:id/journal`. */
export interface ForkRunParams {
  at: string;
  /** `current` (default): the deployed catalog from `at` on; `pinned`: the one the source started on. */
  definitions?: "current" | "pinned";
  /** The source's when absent. */
  approvalMode?: ApprovalMode;
}

/** `POST /runs/:id/fork`: the new run, its origin and what was copied. */
export interface ForkedRun extends StartedRun {
  forked_from: { run: string; at: string };
  copied: { rows: number; bytes: number; batches: number };
}

/** One page of `GET /runs/:id/journal`: steps without their values; `next`: pass as `after` (null: the last page). */
export interface JournalPage {
  steps: Array<{ seq: number; key: string; kind: string; at: number; bytes: number }>;
  next: number | null;
}

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

/**
 * A decision. `arguments` (with approve): the call runs with these instead, checked against
 * the tool's input schema (at most 64 KiB of JSON). `respond`: `result` (at most 32,000
 * characters) is the call's result, given by a person; the tool never runs.
 */
export type DecideParams =
  | { decision: "approve"; note?: string; arguments?: Record<string, unknown> }
  | { decision: "reject"; note?: string }
  | { decision: "respond"; note?: string; result: string };

/** `POST /runs/:id/approvals/:approvalId`. */
export interface Decision {
  approval_id: string;
  approved: boolean;
  /** `responded`: answered in the call's place. */
  status: "approved" | "rejected" | "responded";
  /** Approved with edited arguments (false when they equal the asked ones). */
  edited: boolean;
}

/** `POST /runs/:id/questions/:questionId`. */
export interface Answered {
  question_id: string;
  answered: true;
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
