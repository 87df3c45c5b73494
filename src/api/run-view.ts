import * as z from "zod";
import { approvalMode, attributes, decider, runStatus, usage } from "./common";

/** `GET /runs/:id`: a run, its approvals, waits, call tree, timeline and conversation (wire shapes; src/runs/types.ts builds them). */

/** An approval of a call, or a question to a person (`kind: question`, answered with text). */
export const approvalView = z.object({
  id: z.string(),
  kind: z.enum(["approval", "question"]),
  /** `responded`: a person answered in place of the call, which never ran (`response`). */
  status: z.enum(["pending", "approved", "rejected", "responded", "expired", "voided"]),
  tool: z.string(),
  args: z.unknown(),
  description: z.string(),
  worker_chain: z.array(z.string()),
  call_path: z.string(),
  notify: z.string().nullable(),
  /** Who may decide it, when its policy names people. */
  deciders: z.object({ ask: z.array(z.string()).nullable(), allow_initiator: z.boolean() }).nullable(),
  note: z.string().nullable(),
  /** A question's answer, once answered. */
  answer: z.string().nullable(),
  decided_by: z.string().nullable(),
  /** The person who decided and how (null: undecided, or no person decided: an expiry, the run's mode). */
  by: decider.nullable(),
  /** Whether an approver may edit its arguments or answer in its place (not when its policy says `editable: false`). */
  editable: z.boolean(),
  /** The tool's input schema an edit is checked against, while it is pending and editable; else null. */
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  /** The arguments the call ran with when an approver edited them before approving; else null. */
  edited_args: z.unknown(),
  /** The result an approver gave in place of the call (status `responded`); else null. */
  response: z.string().nullable(),
  /** Why the edited call was refused by a deny rule of the approval policy (it never ran, though approved); else null. */
  denied: z.string().nullable(),
  /** SHA-256 (32 hex digits) of the asked arguments the decision is bound to; null while pending or for a budget's. */
  args_sha256: z.string().nullable(),
  created_at: z.number(),
  decided_at: z.number().nullable(),
  expires_at: z.number(),
  /** Its emails that were not delivered (request, reminder, escalation), and why; `retrying`: another attempt is planned. */
  email_failures: z.array(
    z.object({
      kind: z.enum(["request", "reminder", "escalation"]),
      to: z.string(),
      reason: z.string(),
      code: z.string(),
      retrying: z.boolean(),
      attempts: z.number(),
      at: z.number(),
    }),
  ),
});

/** Something a run is paused on that ends by itself: a durable wait or a question to a person. */
export const waitView = z.object({
  /** The wait's id; a question's id (as in `approvals`). */
  id: z.string(),
  kind: z.enum(["sleep", "event", "question", "child"]),
  /** The event's name (kind `event`); the question's id (kind `question`); the child run's worker (kind `child`, its run id is `key`). */
  name: z.string().optional(),
  /** The correlation key a signal trigger wakes it by. */
  key: z.string().optional(),
  /** When a sleep wakes (kind `sleep`). */
  until: z.number().optional(),
  /** When it ends by itself: the wake-up, the event wait's timeout, the question's expiry. */
  expires_at: z.number(),
  /** Why it waits, as the code or the model said; a question's text (both cut to 300 characters). */
  reason: z.string().optional(),
  call_path: z.string(),
  worker_chain: z.array(z.string()),
  created_at: z.number(),
});

export const attachmentRecord = z.object({ ref: z.string(), name: z.string(), type: z.string(), size: z.number(), sha256: z.string() });

/** A tool call in the call tree; `pending`: no result yet (running, or waiting for approval). */
export const toolNode = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string(),
  args: z.unknown(),
  status: z.enum(["ok", "error", "pending"]),
  /** The result as a person reads it, cut to 2000 characters. */
  result: z.string().optional(),
  error: z.string().optional(),
  /** Set when the outcome was cut to fit the journal: its full size in bytes. */
  truncatedFrom: z.number().optional(),
  /** Set when a person edited the call before approving it: the arguments it ran with (`args`: the model's), and who; `denied`: a deny rule refused the edited call (why), which never ran. */
  edited: z.object({ args: z.unknown(), by: decider.nullable(), denied: z.string().optional() }).optional(),
  /** Set when a person answered in place of the call (it never ran): the result is theirs. */
  answeredBy: z.object({ by: decider.nullable() }).optional(),
  /** What undoes the call's effect when the run fails (`compensate:`), and whether it was made. */
  undo: z
    .object({
      tool: z.string(),
      args: z.unknown().optional(),
      status: z.enum(["ok", "error", "not_made", "skipped"]),
      result: z.string().optional(),
      error: z.string().optional(),
    })
    .optional(),
  attachments: z.array(attachmentRecord).optional(),
  get calls(): z.ZodArray<typeof callNode> {
    return z.array(callNode);
  },
});

/** A worker call: its turns, its own usage, its tool calls (and the workers they called). */
export const callNode = z.object({ worker: z.string(), path: z.string(), turns: z.number(), usage, tools: z.array(toolNode) });

/** The run page's waterfall: when each worker call, model request, tool call and pause began and ended (ms), with totals. */
export const timeline = z.object({
  start: z.number(),
  end: z.number(),
  /** In call order; `depth`: nesting under the root worker; `open`: not ended yet. */
  spans: z.array(
    z.object({
      kind: z.enum(["worker", "model", "tool", "pause"]),
      label: z.string(),
      path: z.string(),
      depth: z.number(),
      start: z.number(),
      end: z.number(),
      open: z.boolean().optional(),
    }),
  ),
  /** Spans left out past 400. */
  omitted: z.number(),
  totals: z.object({ model_ms: z.number(), tool_ms: z.number(), paused_ms: z.number(), wall_ms: z.number() }),
});

export const runView = z.object({
  id: z.string(),
  worker: z.string(),
  status: runStatus,
  input: z.unknown(),
  output: z.unknown(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  usage: usage.nullable(),
  approval_mode: approvalMode,
  /** What started the run (`{kind: "api"}`, a webhook delivery…). */
  trigger: z.unknown(),
  /** Those it started with, under those its code set (`ctx.setAttribute`). */
  attributes,
  created_at: z.number(),
  updated_at: z.number(),
  /** The catalog version the run started on and runs on (null: started before runs were pinned). */
  catalog_version: z.string().nullable(),
  /** The edgework package version the run started under (null: started before versions were recorded). */
  edgework_version: z.string().nullable(),
  /** The version of its latest activation, once one ran under another version than it started under; else null. */
  resumed_under: z.string().nullable(),
  approvals: z.array(approvalView),
  /** What the run waits for now besides approvals (timers, events, open questions); empty once it ended. */
  waits: z.array(waitView),
  call_tree: callNode.nullable(),
  /** The run and journal step this run was forked from (`POST /runs/:id/fork`), or null. */
  forked_from: z.object({ run: z.string(), at: z.string() }).nullable(),
  /** The run that started this one as its child (`ctx.spawn`, `ctx.map`, `run: child`), or null. */
  parent: z.object({ run: z.string(), call_path: z.string() }).nullable(),
  /** The child runs this run started, in the order they started; `running` until a child told its end. */
  children: z.array(z.object({ id: z.string(), worker: z.string(), call_path: z.string(), status: z.enum(["running", "succeeded", "failed", "cancelled"]) })),
  timeline,
  /** The conversation with the root worker: the input, each message sent since, each answer. */
  messages: z.array(z.object({ role: z.enum(["user", "assistant"]), text: z.string(), at: z.number() })),
  /** A conversation by email: answers that could not be mailed back, and why. */
  answer_email_failures: z.array(z.object({ message: z.number(), reason: z.string(), code: z.string(), at: z.number() })),
  /** Where a worker's history was compacted to fit its model's context (`context:`): before which turn, how many messages, what replaced them (a summary, cut; null for a window). */
  compactions: z.array(
    z.object({
      path: z.string(),
      turn: z.number(),
      compact: z.enum(["summarize", "window"]),
      replaced: z.number(),
      tokens_before: z.number(),
      tokens_after: z.number(),
      model: z.string().nullable(),
      summary: z.string().nullable(),
      at: z.number(),
    }),
  ),
});
