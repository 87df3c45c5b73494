/**
 * What the HTTP API sends and takes, as the server's own schemas say (src/api/: the schemas
 * the routes validate with and the OpenAPI document is made from). Type imports only: the
 * client bundles for browsers without any server code. Field names are the wire's; the
 * parameters of the client's methods are camelCase where the client maps them.
 */
import type * as z from "zod";
import type { approvalMode, decider, runStatus, usage } from "../api/common";
import type { approvalView, attachmentRecord, callNode, runView, timeline, toolNode, waitView } from "../api/run-view";
import type {
  answered,
  cancelledRun,
  decision,
  eventBody,
  forkBody,
  forkedRun,
  journalPage,
  pendingApprovals,
  resumedRun,
  runListItem,
  runPage,
  sentEvent,
  sentMessage,
  startBody,
  startedRun,
} from "../api/runs";
import type { workerList } from "../api/workers";

/** `awaiting_approval`: paused for a person to approve or reject a call; `waiting`: paused for a timer, an event or an answer to a question (see `Run.waits`). */
export type RunStatus = z.output<typeof runStatus>;

/** Statuses a run never leaves. */
export const TERMINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "cancelled"];

export type ApprovalMode = z.output<typeof approvalMode>;

/** Tokens and requests used by a model call, a worker call or a whole run. */
export type Usage = z.output<typeof usage>;

type StartBody = z.input<typeof startBody>;
type WireBudget = NonNullable<StartBody["budget"]>;

export interface Budget {
  maxTokens?: WireBudget["max_tokens"];
  maxCostUsd?: WireBudget["max_cost_usd"];
  /** `ask`: pause for the run's approver to extend the budget. Default `fail`. */
  onExceed?: WireBudget["on_exceed"];
}

export interface StartRunParams {
  /** A worker's or code function's name (`GET /workers`). */
  worker: StartBody["worker"];
  /** Matching the worker's input schema; a string means `{input: "…"}` for default-schema workers. */
  input: unknown;
  approvalMode?: ApprovalMode;
  budget?: Budget;
  /** A completion webhook: the run's end (and with `notifyOn: ["ended", "paused"]` its pauses) posted there, signed (docs/triggers.md). */
  notifyUrl?: StartBody["notify_url"];
  notifyOn?: StartBody["notify_on"];
  /** What finds the run in listings (`runs.list({ attributes })`): at most 10; names a-z 0-9 _, values 1–256 characters (numbers and booleans kept as text). */
  attributes?: StartBody["attributes"];
  /**
   * Sent as `Idempotency-Key` (1–255 visible ASCII characters): the same key and body within
   * 24 h name the same run. Default: a new random key per `start` call, the same on each of its
   * retries. Pass your own (e.g. your job's id) to make starts repeated across processes safe too.
   */
  idempotencyKey?: string;
}

/** `POST /runs` → 202 (200 for a repeat with the same `Idempotency-Key`). */
export type StartedRun = z.output<typeof startedRun>;

/** Who decided an approval and how; `email` is null for the API token (and sessions signed in with it). */
export type Decider = z.output<typeof decider>;

export type ApprovalView = z.output<typeof approvalView>;
export type AttachmentRecord = z.output<typeof attachmentRecord>;
/** A tool call of the call tree; `pending`: no result yet (running, or waiting for approval). */
export type ToolNode = z.output<typeof toolNode>;
export type CallNode = z.output<typeof callNode>;

/** Something a run is paused on that ends by itself: a durable wait (ctx.sleep, ctx.waitForEvent, the `wait` kind) or a question to a person (ctx.askHuman, the `human` kind). A question's `name` is its id: `approvals.answer(runId, name, text)` answers it. */
export type WaitView = z.output<typeof waitView>;

/** `POST /runs/:id/events/:name`'s body: the event's payload (≤ 64 KiB as JSON), its id (same id twice: once), a correlation key. */
export interface SendEventParams {
  payload: z.input<typeof eventBody>["payload"];
  id?: string;
  key?: string;
}

/** `POST /runs/:id/events/:name` → 202: taken by a wait (`applied`), kept for the next one (`buffered`), or a repeat (`duplicate`). */
export type SentEvent = z.output<typeof sentEvent>;

/** `GET /runs/:id`. */
export type Run = z.output<typeof runView>;

/** `POST /runs/:id/messages`: the run answers message number `message` (the input is 1). */
export type SentMessage = z.output<typeof sentMessage>;

/** `GET /runs/:id`'s `timeline`: the run page's waterfall. */
export type RunTimeline = z.output<typeof timeline>;

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

export type RunListItem = z.output<typeof runListItem>;

/** `GET /runs`: one page, newest first; `next_cursor` null on the last. */
export type RunPage = z.output<typeof runPage>;

/** `POST /runs/:id/cancel`. */
export type CancelledRun = z.output<typeof cancelledRun>;

type ForkBody = z.input<typeof forkBody>;

/** `POST /runs/:id/fork`'s parameters: `at` a key from `GET /runs/:id/journal`. */
export interface ForkRunParams {
  at: ForkBody["at"];
  /** `current` (default): the deployed catalog from `at` on; `pinned`: the one the source started on. */
  definitions?: ForkBody["definitions"];
  /** The source's when absent. */
  approvalMode?: ApprovalMode;
}

/** `POST /runs/:id/fork`: the new run, its origin and what was copied. */
export type ForkedRun = z.output<typeof forkedRun>;

/** One page of `GET /runs/:id/journal`: steps without their values; `next`: pass as `after` (null: the last page). */
export type JournalPage = z.output<typeof journalPage>;

/** `POST /runs/:id/resume`. */
export type ResumedRun = z.output<typeof resumedRun>;

/** `GET /approvals?status=pending`: oldest first, at most 1000 (`truncated` when there are more). */
export type PendingApprovals = z.output<typeof pendingApprovals>;
export type PendingApproval = PendingApprovals["approvals"][number];

/**
 * A decision (`note`: at most 2000 characters). `arguments` (with approve): the call runs with
 * these instead, checked against the tool's input schema (at most 64 KiB of JSON). `respond`:
 * `result` (at most 32,000 characters) is the call's result, given by a person; the tool never runs.
 * A narrowing of the route's body (`decisionBody`), by decision.
 */
export type DecideParams =
  | { decision: "approve"; note?: string; arguments?: Record<string, unknown> }
  | { decision: "reject"; note?: string }
  | { decision: "respond"; note?: string; result: string };

/** `POST /runs/:id/approvals/:approvalId`. */
export type Decision = z.output<typeof decision>;

/** `POST /runs/:id/questions/:questionId`. */
export type Answered = z.output<typeof answered>;

export type WorkerList = z.output<typeof workerList>;
/** One entry of `GET /workers`: `parameters` is the JSON Schema of the worker's input (its tool parameters). */
export type WorkerInfo = WorkerList["workers"][number];
