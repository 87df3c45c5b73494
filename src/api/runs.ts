import * as z from "zod";
import { attributeCriteria, attributesSchema, MAX_ATTRIBUTES } from "./attributes";
import { EVENT_ID, MAX_ANSWER_CHARS, MAX_FORK_KEY, MAX_NOTIFY_URL_CHARS } from "./bounds";
import { approvalMode, attributes, budgetSchema, RUN_STATUSES, runStatus, started, usage } from "./common";
import { runFilters, since } from "./run-filter";

/** `/runs`, `/approvals`: what the run routes take (bodies, queries) and give. */

/** When a completion webhook is posted: the run's end, its pauses (awaiting a person, waiting). */
export const NOTIFY_ON = ["ended", "paused"] as const;
export const MAX_LIST_LIMIT = 200;

/** `POST /runs`. */
export const startBody = z.strictObject({
  worker: z.string().min(1),
  input: z.unknown(),
  approval_mode: approvalMode.default("ask"),
  budget: budgetSchema.default({}),
  /** A completion webhook (docs/triggers.md, "Completion webhooks"): checked by `runNotify` (hosts, https, no credentials, bounded). */
  notify_url: z.string().max(MAX_NOTIFY_URL_CHARS).optional(),
  notify_on: z.array(z.enum(NOTIFY_ON)).min(1).max(NOTIFY_ON.length).optional(),
  /** What finds the run in listings (`GET /runs?attr.<name>=<value>`): at most MAX_ATTRIBUTES, each bounded. */
  attributes: attributesSchema(MAX_ATTRIBUTES, "attributes").default({}),
});

/** `POST /runs` → 202 (200 for a repeat with the same `Idempotency-Key`). */
export const startedRun = started;

/** `POST /runs/:id/fork`: `at` is a key of `GET /runs/:id/journal`. */
export const forkBody = z.strictObject({
  at: z.string().min(1).max(MAX_FORK_KEY),
  definitions: z.enum(["current", "pinned"]).default("current"),
  approval_mode: approvalMode.optional(),
});
export const forkedRun = z.object({
  ...started.shape,
  forked_from: z.object({ run: z.string(), at: z.string() }),
  copied: z.object({ rows: z.number(), bytes: z.number(), batches: z.number() }),
});

/** `GET /runs/:id/journal` paging: `after` a seq, `limit` at most 500 steps. */
export const journalQuery = z.object({
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
/** Steps without their values; `next`: pass as `after` (null: the last page). */
export const journalPage = z.object({
  steps: z.array(z.object({ seq: z.number(), key: z.string(), kind: z.string(), at: z.number(), bytes: z.number() })),
  next: z.number().nullable(),
});

/** A conversation's next message; its text is bounded by the run's object; the same `id` again adds none. */
export const messageBody = z.strictObject({
  text: z.string(),
  id: z.string().regex(EVENT_ID, "a message id is 1-200 characters of A-Z a-z 0-9 _ . : -").optional(),
});
/** The run answers message number `message` (the input is 1); `duplicate`: its id was taken before; `waiting`: it waits its turn. */
export const sentMessage = z.object({
  id: z.string(),
  status: runStatus,
  message: z.number(),
  duplicate: z.literal(true).optional(),
  waiting: z.literal(true).optional(),
});

/**
 * A decision: `arguments` (with approve) edit the call, `result` (with respond) answers in its
 * place; the run checks what fits the approval, against the tool's input schema, and their bounds.
 */
export const decisionBody = z.strictObject({
  decision: z.enum(["approve", "reject", "respond"]),
  note: z.string().max(2000).optional(),
  arguments: z.unknown().optional(),
  result: z.string().optional(),
});
/** `responded`: answered in the call's place; `edited`: approved with arguments other than the asked ones. */
export const decision = z.object({
  approval_id: z.string(),
  approved: z.boolean(),
  status: z.enum(["approved", "rejected", "responded"]),
  edited: z.boolean(),
});
export const answerBody = z.strictObject({ answer: z.string().trim().min(1).max(MAX_ANSWER_CHARS) });
export const answered = z.object({ question_id: z.string(), answered: z.literal(true) });

/** An event for a run; its bounds are checked by `checkEvent` (name, id, key, 64 KiB of payload). */
export const eventBody = z.strictObject({ payload: z.unknown(), id: z.unknown().optional(), key: z.unknown().optional() });
/** Taken by a wait (`applied`), kept for the next one (`buffered`), or a repeat (`duplicate`). */
export const sentEvent = z.object({ id: z.string(), applied: z.boolean(), buffered: z.boolean(), duplicate: z.boolean() });

/** `cancelling`: the run undoes the effects its tools said how to undo (`compensate:`), then ends cancelled. */
export const cancelledRun = z.object({ id: z.string(), status: z.enum(["cancelled", "cancelling"]) });
export const resumedRun = z.object({ id: z.string(), status: runStatus, resumed: z.literal(true) });

/** `<created_at>.<id>` of the last run on the page: the keyset the next page starts after. */
const cursor = z
  .string()
  .regex(/^\d{1,16}\.[A-Za-z0-9_-]{1,128}$/, "not a cursor from a previous page's next_cursor")
  .transform((s) => ({ created_at: Number(s.slice(0, s.indexOf("."))), id: s.slice(s.indexOf(".") + 1) }));

/** `GET /runs` (each `attr.<name>` gathered under `attributes`). */
export const runsQuery = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  ...runFilters,
  since: since.optional(),
  attributes: attributeCriteria.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(50),
  cursor: cursor.optional(),
});

/** `GET /inbox`'s filter (a page's: a status it does not know is ignored). */
export const inboxQuery = z.object({
  status: z.enum(RUN_STATUSES).optional().catch(undefined),
  ...runFilters,
  attributes: attributeCriteria.optional(),
});

/** One run of a listing. */
export const runListItem = z.object({
  id: z.string(),
  worker: z.string(),
  status: runStatus,
  trigger: z.object({ kind: z.string(), name: z.string().optional() }),
  attributes,
  created_at: z.number(),
  updated_at: z.number(),
  usage: usage.nullable(),
});
/** `GET /runs`: one page, newest first; `next_cursor` null on the last. */
export const runPage = z.object({ runs: z.array(runListItem), next_cursor: z.string().nullable() });

export const approvalsQuery = z.strictObject({ status: z.literal("pending", "only status=pending is listed").default("pending") });
/** `GET /approvals?status=pending`: oldest first, at most 1000 (`truncated` when there are more). */
export const pendingApprovals = z.object({
  approvals: z.array(
    z.object({
      run_id: z.string(),
      worker: z.string(),
      approval_id: z.string(),
      tool: z.string(),
      worker_chain: z.array(z.string()),
      created_at: z.number(),
      expires_at: z.number(),
      age_seconds: z.number(),
      expires_in_seconds: z.number(),
    }),
  ),
  truncated: z.boolean(),
});
