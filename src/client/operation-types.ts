/** `POST /operations`, `GET /operations/:id`: bulk operations on the runs a filter matches (wire shapes). */

import type { RunStatus } from "./types";

export type OperationAction = "cancel" | "resume" | "fork";

/** Which runs: as `runs.list` filters them; at least one of status, worker, trigger or attributes. */
export interface RunFilter {
  status?: RunStatus;
  worker?: string;
  trigger?: string;
  /** Epoch ms, or an ISO date. */
  since?: number | string;
  /** Each has exactly this value; at most 3. */
  attributes?: Record<string, string>;
}

export interface OperationParams {
  action: OperationAction;
  filter: RunFilter;
  /** `fork` only: `current` (default) forks each run from its start on the deployed definitions ("re-run after a fix"); `pinned` on its own. */
  definitions?: "current" | "pinned";
  /** Sent as `Idempotency-Key`: the same key and body within 24 h name the same operation. Default: a new one per call, the same on its retries. */
  idempotencyKey?: string;
}

/** `POST /operations` → 202 (200 for a repeat with the same Idempotency-Key). */
export interface StartedOperation {
  id: string;
  status_url: string;
}

/** `POST /operations` with `dry_run: true`: the runs it would touch (at most 1000, newest first); `skip`: why it would leave one alone. */
export interface DryRun {
  dry_run: true;
  action: OperationAction;
  runs: Array<{ id: string; worker: string; status: RunStatus; created_at: number; attributes: Record<string, string>; skip?: string }>;
  truncated: boolean;
}

/** `GET /operations/:id`. */
export interface Operation {
  id: string;
  action: OperationAction;
  filter: RunFilter;
  definitions: "current" | "pinned";
  status: "running" | "done" | "cancelled";
  /** Acted on, could not act on (`failures`), nothing to do (already ended, say). */
  counts: { done: number; failed: number; skipped: number };
  /** The oldest 50 failures, each reason at most 300 characters. */
  failures: Array<{ run_id: string; reason: string; at: number }>;
  failures_truncated: boolean;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}
