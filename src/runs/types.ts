import type { CompactionView } from "../engine/journal/compactions";
import type { ApprovalMode, Budget, Decider, Usage } from "../engine";
import type { CallNode } from "../engine/journal/call-tree";
import type { Timeline } from "../engine/journal/timeline";
import type { ForkOrigin } from "./fork";
import type { Attributes } from "../engine/attributes";
import type { JSONSchema } from "../engine/types/json-schema";
import { RUN_STATUSES } from "../api/common";
import type { NOTIFY_ON } from "../api/runs";

/** Every status a run can have, in lifecycle order (filters, pages): the API's. */
export { RUN_STATUSES };
export type RunStatusName = (typeof RUN_STATUSES)[number];
/** Paused: for a person's decision (`awaiting_approval`) or for what ends by itself (`waiting`: timers, events, questions); the run holds one alarm. */
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
  /** Who hears of the run's end (src/notify): its completion webhook (checked by the app), the flow key object that started it (its name). */
  notify?: RunNotify;
  /** Its attributes (checked: src/engine/attributes.ts), which find it in listings. */
  attributes?: Attributes;
}

/** A child run's parent (`ctx.spawn`, `ctx.map`, `run: child`): the run, the spawn's journal key, and the depth the child's calls count on from. */
export interface ParentRef {
  run: string;
  key: string;
  depth: number;
  /** The tree's root run: its trace is the child's too. */
  root: string;
}

/** A child run as its parent's view lists it: `running` until it told the parent its end. */
export interface ChildView {
  id: string;
  worker: string;
  /** The spawn's journal key in the parent. */
  call_path: string;
  status: "running" | "succeeded" | "failed" | "cancelled";
}

/** A run's listeners, kept with it from its start (durable-objects/run/outbox.ts). */
export interface RunNotify {
  /** A completion webhook: posted at the run's end, and at its pauses when `on` says so. */
  url?: { url: string; on: NotifyOn[] };
  /** The flow key object (durable-objects/flow) that started the run: told when it ends, so its key's slot frees. */
  flow?: string;
  /** The run that started this one as its child: told its end until it answers. */
  parent?: ParentRef;
}

export { NOTIFY_ON } from "../api/runs";
export type NotifyOn = (typeof NOTIFY_ON)[number];

export interface ApprovalView {
  id: string;
  /** `question`: a question to a person (`ctx.askHuman`, the `human` kind), answered with text; else a call's approval. */
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
  /** Who may decide it, when its policy names people: `ask` entries (addresses, `*@domain`, `api`), and whether the run's initiator may. */
  deciders: { ask: string[] | null; allow_initiator: boolean } | null;
  note: string | null;
  /** A question's answer, once answered. */
  answer: string | null;
  /** Who or what decided, as people read it ("approval link (lead@example.com)", "api", "expiry"). */
  decided_by: string | null;
  /** The person who decided and how (null: nobody yet, or no person: an expiry, the run's approval mode). */
  by: Decider | null;
  /** Whether an approver may edit its arguments or answer in its place: a call's approval whose policy does not say `editable: false`. */
  editable: boolean;
  /** The tool's input schema an edit is checked against, while it is pending and editable; else null. */
  input_schema: JSONSchema | null;
  /** The arguments the call ran with when an approver edited them before approving; else null. */
  edited_args: unknown;
  /** The result an approver gave in place of the call (status `responded`); else null. */
  response: string | null;
  /** Set when the edited call was refused by a deny rule of the approval policy (it never ran): why; else null. */
  denied: string | null;
  /** What the decision is bound to: SHA-256 (32 hex digits) of the asked arguments as recorded; null while pending, or for a decision bound to none (a budget's, or older). */
  args_sha256: string | null;
  created_at: number;
  decided_at: number | null;
  expires_at: number;
  /** Its emails that were not delivered: the request, a reminder or an escalation (empty when all went out). */
  email_failures: EmailFailureView[];
}

/** An email that was not delivered, and why (a reason that names no address: durable-objects/run/mail-failures.ts). */
export interface EmailFailureView {
  kind: "request" | "reminder" | "escalation";
  to: string;
  reason: string;
  /** The platform's error code (`E_RECIPIENT_NOT_ALLOWED`…), `E_UNKNOWN` when it gave none we know. */
  code: string;
  /** Another attempt is planned (a failure that may pass); false: given up. */
  retrying: boolean;
  attempts: number;
  at: number;
}

/** An answer of an email conversation that was not mailed, and why (given up: durable-objects/run/answer-mail.ts). */
export interface AnswerEmailFailure {
  /** The answer's number in the conversation (1: the answer to the first mail). */
  message: number;
  reason: string;
  code: string;
  at: number;
}

/**
 * Something the run is paused on that ends by itself: a durable wait (ctx.sleep,
 * ctx.waitForEvent, the `wait` kind) or a question to a person (ctx.askHuman, the
 * `human` kind: src/runs/question-waits.ts).
 */
export interface WaitView {
  /** The wait's id; a question's id (as in `approvals`). */
  id: string;
  kind: "sleep" | "event" | "question" | "child";
  /** The event's name (kind `event`); the question's id (kind `question`: `POST /runs/:id/questions/:name` answers it). */
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
  /** What finds it in listings: the attributes it started with, under those its code set (`ctx.setAttribute`). */
  attributes: Attributes;
  created_at: number;
  updated_at: number;
  /** The catalog version the run started on and runs on (null: started before runs were pinned). */
  catalog_version: string | null;
  /** The edgework package version the run started under (null: started before versions were recorded). */
  edgework_version: string | null;
  /** The version of its latest activation, once one ran under another version than it started under; else null. */
  resumed_under: string | null;
  approvals: ApprovalView[];
  /** What the run waits for now besides approvals: its timers, events and open questions (empty once it ended). */
  waits: WaitView[];
  call_tree: CallNode | null;
  /** The run and step this run was forked from (POST /runs/:id/fork), or null. */
  forked_from: ForkOrigin | null;
  /** The run that started this one as its child (`ctx.spawn`, `ctx.map`, `run: child`), or null. */
  parent: { run: string; call_path: string } | null;
  /** The child runs this run started, in the order they started. */
  children: ChildView[];
  /** When each worker call, model request, tool call and pause began and ended, with totals (the run page's waterfall). */
  timeline: Timeline;
  /** The conversation with the root worker: its input, each message sent since (POST /runs/:id/messages), each answer. */
  messages: ConversationMessage[];
  /** A conversation by email: answers that could not be mailed back, and why. */
  answer_email_failures: AnswerEmailFailure[];
  /** Where a worker's history was compacted to fit its model's context (`context:`), and what replaced it. */
  compactions: CompactionView[];
}

/** One message of a run's conversation; `at`: when it was sent or answered (ms). */
export interface ConversationMessage {
  role: "user" | "assistant";
  text: string;
  at: number;
}

export interface RunEvent {
  /** This event's own cursor, for Last-Event-ID: `<journal seq>-<event seq>`, or `<j>-<e>-<n>` inside a step's several events (durable-objects/run/events.ts). */
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** RPC answers that can fail carry an HTTP-like status instead of throwing across RPC. */
export type Answer<T = Record<string, never>> = ({ ok: true } & T) | { ok: false; status: 400 | 403 | 404 | 409 | 410 | 413 | 429; error: string };

/** An event for a run (`POST /runs/:id/events/:name`, a signal trigger), checked by the app (src/runs/events.ts). */
export interface EventDelivery {
  name: string;
  /** The delivery id: a second delivery of one id changes nothing. */
  id: string;
  payload: unknown;
  /** The correlation key: only waits with this one take it (and, delivered by API, waits without a key). */
  key?: string;
}

/** What a delivered event did: taken by a wait (`applied`), kept for a later wait (`buffered`), or a repeat of an id (`duplicate`). */
export interface EventOutcome {
  applied: boolean;
  buffered: boolean;
  duplicate: boolean;
  /** A repeat only: whether a wait the event would end is still pending. */
  waiting?: boolean;
}

/** A decision on an approval, by API, page or emailed reply. */
export interface DecisionRequest {
  /** `respond`: answer in place of the call (`result`), which never runs. */
  decision: "approve" | "reject" | "respond";
  note?: string;
  by: string;
  /** A question's answer (then `decision` is "approve"); a question takes nothing else, an approval never one. */
  answer?: string;
  /** With "approve": the arguments the call runs with instead of the asked ones (checked against the tool's input schema: src/engine/approvals/edit.ts). */
  arguments?: unknown;
  /** With "respond": the call's result, given by the person deciding. */
  result?: string;
  /** Who decides and how, checked against the approval's policy; absent: the API token (`{email: null, via: "api"}`). */
  decider?: Decider;
  remember?: boolean;
  /** Set for an emailed reply: its sender, which must be an address the approval was emailed to. */
  replyFrom?: string;
  /** Set for a Slack press: the message it came from, which must be the one posted for this approval. */
  slackMessage?: { channel: string; ts: string };
}

/** What a decision did: approved (as asked, or `edited`), rejected, or answered in the call's place (`responded`). */
export interface Decided {
  approved: boolean;
  status: "approved" | "rejected" | "responded";
  edited: boolean;
}

/** An emailed reply, read both ways: which one counts depends on what it answers (an approval: `decision`; a question: `answer`). */
/**
 * A message taken into a run's conversation (`POST /runs/:id/messages`, an emailed reply, a flow key's follow-up);
 * `duplicate`: its id was taken before, nothing new; `waiting`: the run is still working, the message waits its turn.
 */
export type SentMessage = { status: RunStatusName; message: number; duplicate?: true; waiting?: true };

/** The sender's reply to a run's answer mail (src/triggers/email-conversation.ts), for the run to check and take. */
export interface EmailReply {
  /** The From address (lowercase), checked against the run's initiator. */
  from: string;
  /** The message's size in bytes, checked against its trigger's `max_bytes`. */
  size: number;
  /** The reply's Message-ID if it has one that fits a thread header (the next answer's In-Reply-To). */
  messageId: string | null;
  /** What identifies this delivery (sender and Message-ID, else the bytes): a redelivery adds no message. */
  deliveryId: string;
  /** The text above the quote, bounded. */
  text: string;
  /** Whether the receiving server's topmost Authentication-Results says dmarc=pass (a `require_dmarc` trigger's conversation takes only those). */
  dmarc: boolean;
}

export interface ReplyRequest {
  /** The decision line, if the reply has one. */
  decision: { decision: "approve" | "reject"; note?: string } | null;
  /** The reply's first paragraph (bounded), if any. */
  answer: string | null;
  /** Why `decision` is null, for the sender of a reply to an approval. */
  noDecision: string;
  by: string;
  decider: Decider;
  /** The envelope sender: an address the approval was emailed to. */
  replyFrom: string;
}

/** A piece of model text as it streams (from the object's own request, or forwarded by the queue's consumer), for watchers of the run page. */
export interface ModelDelta {
  /** Increases by one per piece; watchers ask for pieces after the last one they saw. */
  seq: number;
  /** One model request of this activation: pieces of one answer share it. */
  stream: number;
  text: string;
}
