/**
 * Bulk operations (`POST /operations`): cancel, resume or fork every run a filter matches, as one
 * request that returns at once; the work is done by one Durable Object per operation
 * (durable-objects/operation/), at a bounded rate. What the routes take and give is the API's
 * (src/api/operations.ts); here, the RPC the app asks of an operation's object.
 */

import type * as z from "zod";
import type { dryRunView, OPERATION_ACTIONS, operationBody, operationView } from "../api/operations";
import type { RunFilter } from "../runs/index-types";
import type { RunStatusName } from "../runs/types";

export type OperationAction = (typeof OPERATION_ACTIONS)[number];

/** An operation's id: `op-` and a UUID. */
export const OPERATION_ID = /^op-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs acted on per batch (one alarm), at most this many at once, batches this far apart: at most 25 runs a second per operation. */
export const OPERATION_RATE = { batch: 25, parallel: 5, intervalMs: 1000 } as const;
/** A dry run lists at most this many runs. */
export const MAX_DRY_RUN = 1000;
/** `GET /operations/:id` shows at most this many failures (the oldest); each reason at most 300 characters. */
export const MAX_FAILURES_SHOWN = 50;
export const MAX_REASON_CHARS = 300;
/** A run an action failed for (no answer from its object) is tried this many times in all, in later batches, before it counts as failed. */
export const MAX_ATTEMPTS = 3;
/** An ended operation is kept this long for `GET /operations/:id`, then deleted. */
export const OPERATION_RETENTION_MS = 30 * 86_400_000;

export type OperationBody = z.output<typeof operationBody>;

/** What an operation's object is asked to do: the request, checked, with its id and the instant that bounds its runs. */
export interface OperationSpec {
  id: string;
  action: OperationAction;
  filter: RunFilter;
  definitions: "current" | "pinned";
  /** Runs created after this are never touched (the filter's snapshot: newest first from here). */
  created_at: number;
}

export type OperationView = z.output<typeof operationView>;

export type DryRunView = z.output<typeof dryRunView>;

/** Why `action` would leave a run of `status` alone (its own object has the last word), or undefined. */
export function foreseenSkip(action: OperationAction, status: RunStatusName): string | undefined {
  const ended = status === "succeeded" || status === "failed" || status === "cancelled";
  if (action === "cancel" && ended) return `the run already ${status === "cancelled" ? "was cancelled" : status}`;
  if (action === "resume" && ended) return `the run already ${status === "cancelled" ? "was cancelled" : status}: nothing to resume`;
  return undefined;
}

/** What the app asks of an operation's object (durable-objects/operation/operation.ts). */
export interface OperationRpc {
  /** Starts the operation (its first batch at once); the same spec again finds it, another is refused. */
  begin(spec: OperationSpec): Promise<{ ok: true; created: boolean } | { ok: false; error: string }>;
  /** The operation and its progress; null for an id that names none. */
  view(): Promise<OperationView | null>;
  /** Stops it before its next run (what was done stays done); an ended one is left as it is. */
  cancel(): Promise<OperationView | null>;
}

export const operationStub = (env: Env, id: string) => env.OPERATIONS.getByName(id) as unknown as OperationRpc;
