/** `POST /operations`, `GET /operations/:id`: bulk operations on the runs a filter matches (the server's schemas: src/api/operations.ts). */

import type * as z from "zod";
import type { dryRunView, operationBody, operationStarted, operationView } from "../api/operations";

type OperationBody = z.input<typeof operationBody>;

export type OperationAction = OperationBody["action"];

/** Which runs: as `runs.list` filters them; at least one of status, worker, trigger or attributes. `since`: epoch ms, or an ISO date. */
export type RunFilter = OperationBody["filter"];

export interface OperationParams {
  action: OperationAction;
  filter: RunFilter;
  /** `fork` only: `current` (default) forks each run from its start on the deployed definitions ("re-run after a fix"); `pinned` on its own. */
  definitions?: OperationBody["definitions"];
  /** Sent as `Idempotency-Key`: the same key and body within 24 h name the same operation. Default: a new one per call, the same on its retries. */
  idempotencyKey?: string;
}

/** `POST /operations` → 202 (200 for a repeat with the same Idempotency-Key). */
export type StartedOperation = z.output<typeof operationStarted>;

/** `POST /operations` with `dry_run: true`: the runs it would touch (at most 1000, newest first); `skip`: why it would leave one alone. */
export type DryRun = z.output<typeof dryRunView>;

/** `GET /operations/:id`: `counts` of runs acted on, not acted on (`failures`: the oldest 50), left alone (already ended, say). */
export type Operation = z.output<typeof operationView>;
