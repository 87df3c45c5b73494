/**
 * The rows the run's queries read, one type per table or view of schema.ts,
 * declared once: `sql.one<RunRow>\`…\``. Columns holding JSON are `JsonText<T>`.
 */

import type { ApprovalMode, Budget, Decider, DeciderPolicy, Usage } from "../src/engine";
import type { Attributes } from "../src/engine/attributes";
import type { JSONSchema } from "../src/engine/types/json-schema";
import type { ApprovalView, RunStatusName } from "../src/runs/types";
import type { JsonText } from "./sql";

/** RUN_CURRENT: the run row as it stands. */
export interface RunRow {
  id: string;
  worker: string;
  input: JsonText<unknown>;
  status: RunStatusName;
  approval_mode: ApprovalMode;
  budget: JsonText<Budget>;
  trigger: JsonText<unknown> | null;
  /** The attributes it started with (null: none, or started before schema version 11). */
  attributes: JsonText<Attributes> | null;
  output: JsonText<unknown> | null;
  error: JsonText<{ code: string; message: string }> | null;
  usage: JsonText<Usage> | null;
  retries: number;
  created_at: number;
  updated_at: number;
}

/** The run row's catalog columns (or, for runs older than schema version 3, the run_catalog table's). */
export interface CatalogRow {
  version: string;
  files: JsonText<Record<string, string>>;
}

export interface JournalRow {
  seq: number;
  key: string;
  value: JsonText<unknown>;
  at: number;
  /** When the step began (null: recorded without executing, or before schema version 8). */
  started_at: number | null;
}

export interface EventRow {
  seq: number;
  after_step: number;
  type: string;
  data: JsonText<Record<string, unknown>>;
  at: number;
}

/** APPROVALS_CURRENT: an approval as it stands. */
export interface ApprovalRow {
  id: string;
  key: string;
  call_path: string;
  worker_chain: JsonText<string[]>;
  tool: string;
  args: JsonText<unknown>;
  description: string;
  notify: string | null;
  deciders: JsonText<DeciderPolicy> | null;
  kind: "question" | null;
  /** A question's answer (its journal step). */
  answer: string | null;
  status: ApprovalView["status"];
  note: string | null;
  decided_by: string | null;
  /** The decision's `decider` (journal step), when a person decided. */
  decider: JsonText<Decider> | null;
  /** The tool's input schema an edit is checked against; null: approved or rejected as asked only. */
  input_schema: JsonText<JSONSchema> | null;
  /** The decision's edited arguments (journal step), when an approver edited the call. */
  edited_args: JsonText<unknown> | null;
  /** The decision's result given in place of the call (journal step), when an approver answered instead. */
  response: string | null;
  /** What the decision is bound to (journal step): SHA-256 of the asked arguments (journal/fingerprint.ts `approvedArgs`). */
  args_hash: string | null;
  /** Set when the approved edit was refused by a deny rule (the call's result step says `denied`): its error. */
  denied: string | null;
  created_at: number;
  decided_at: number | null;
  expires_at: number;
}

export type MailKind = "request" | "reminder" | "escalation";

export interface ApprovalMailRow {
  approval_id: string;
  kind: MailKind;
  recipient: string;
  due_at: number;
  sent_at: number | null;
}

/** `mail_failures`: an approval email that was not delivered (run/mail-failures.ts). */
export interface MailFailureRow {
  approval_id: string;
  kind: MailKind;
  recipient: string;
  attempts: number;
  code: string;
  reason: string;
  /** 1: given up (a lasting refusal, or the last attempt); 0: tried again later. */
  final: number;
  at: number;
}

/** A model request handed to the queue (MODEL_DISPATCH=queue). `answer`: JSON of model-dispatch.ts's StoredAnswer. */
export interface ModelDispatchRow {
  key: string;
  model: string;
  attempt: number;
  sent_at: number;
  claimed: number | null;
  lease_until: number | null;
  answer: string | null;
}

/** Toolset state (both objects keep it). */
export interface StateRow {
  scope: string;
  scope_id: string;
  namespace: string;
  key: string;
  /** JSON of whatever type its reader asks for (StateKV.get<T>). */
  value: string;
}

/** An aggregate (`min(…) AS at`, `count(*) AS n`): null over no rows. */
export interface AtRow {
  at: number | null;
}
export interface CountRow {
  n: number;
}

/** A durable wait (run/waits.ts); pending until its end is in the journal (WAITS_PENDING). */
export interface WaitRow {
  id: string;
  key: string;
  kind: "sleep" | "event" | "child";
  name: string | null;
  correlation: string | null;
  until: number;
  call_path: string;
  worker_chain: JsonText<string[]>;
  reason: string | null;
  created_at: number;
  asked_step: number;
}

/** An event delivered to the run (run/waits.ts), by delivery id. */
export interface InboxRow {
  id: string;
  name: string;
  correlation: string | null;
  payload: JsonText<unknown>;
  state: "taken" | "buffered" | "dropped";
  at: number;
}

/** `answer_mail`: one answer mailed back to a conversation's sender (run/answer-mail.ts). */
export interface AnswerMailRow {
  n: number;
  due_at: number;
  sent_at: number | null;
  attempts: number;
}

/** `outbox`: one notification of a status event to one target (run/outbox.ts). */
export interface OutboxRow {
  event: number;
  target: number;
  /** `parent`: a child run's end, told to its parent (`dest`: the parent's id); `child`: a child cancelled with its parent's end (`dest`: the child's id). */
  kind: "flow" | "url" | "parent" | "child";
  dest: string;
  due_at: number;
  attempts: number;
  first_at: number;
}
