/**
 * The HTTP API's contract (this folder): what every route takes and gives, as the zod
 * schemas the routes validate with and check their answers against, from which the
 * OpenAPI document (src/http/openapi/) and `edgework/client`'s types (type imports only)
 * are made. A module here imports zod and its neighbours, nothing else: the client's
 * types reach no server code (tests/node/client-bundle.test.ts).
 */

import * as z from "zod";

/** Every status a run can have, in lifecycle order (filters, pages). */
export const RUN_STATUSES = ["queued", "running", "awaiting_approval", "waiting", "succeeded", "failed", "cancelled"] as const;
export const runStatus = z.enum(RUN_STATUSES);

export const approvalMode = z.enum(["ask", "approve_all", "reject_all"]);

/** A run's spending limit (a run request, a worker file, a trigger); `on_exceed: ask` pauses for an approval to continue past it. */
export const budgetSchema = z.strictObject({
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
  on_exceed: z.enum(["fail", "ask"]).optional().describe("fail (default): the run fails with budget_exceeded; ask: the run's approver may extend it"),
});

/** Tokens and requests of a model call, a worker call or a whole run. */
export const usage = z.object({ requests: z.number(), inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });

/** Who decided an approval and how; `email` is null for the API token. */
export const decider = z.object({
  email: z.string().nullable(),
  via: z.enum(["link", "reply", "inbox", "api", "access", "slack"]),
  slack: z.string().optional(),
});

/** Any JSON value (one instance: the document names it once, as it is recursive). */
export const json = z.json();

/** A run's attributes as stored: name → text. */
export const attributes = z.record(z.string(), z.string());

/** Every refusal: what is wrong (`issues`: each field's problem, for a 400), and more fields some refusals add. */
export const problem = z.looseObject({ error: z.string(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() });

/** A new run or operation: its id and where to read it. */
export const started = z.object({ id: z.string(), status_url: z.string() });

/** `GET /`: what this is and where its API starts. */
export const appIndex = z.object({ name: z.literal("edgework"), docs: z.string(), api: z.array(z.string()) });
