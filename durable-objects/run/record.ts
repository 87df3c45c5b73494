/**
 * What a run records about itself besides its journal. Owns the writes to `events`:
 * each event is a row there (a `run_*` event is also the run's status: RUN_CURRENT in
 * schema.ts), then its log line (log.ts) and its report to the run index (index-sync.ts).
 * Needs from its host: `ctx` (transactions) and the SQL.
 */

import { isPaused, waitingFor, type RunOutcome, type WaitingFor } from "../../src/engine";
import { json } from "../sql";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";
import type { RunIndexSync } from "./index-sync";
import { logRunEvent } from "./log";

export class RunRecord {
  constructor(
    private readonly host: Pick<RunHost, "ctx" | "sql">,
    private readonly index: Pick<RunIndexSync, "noted">,
    private readonly approvals: Pick<RunApprovals, "voidPending">,
  ) {}

  /** Records a run event: its row, after the journal's last step, then what `noted` does. */
  event(type: string, data: Record<string, unknown>): void {
    this.host.sql
      .run`INSERT INTO events (after_step, type, data, at) VALUES ((SELECT coalesce(max(seq), 0) FROM journal), ${type}, ${json(data)}, ${Date.now()})`;
    this.noted(type, data);
  }

  /** What an event does besides its row (a log line, an index report); alone for facts another row already records. */
  noted(type: string, data: Record<string, unknown>): void {
    logRunEvent(this.host.sql, type, data);
    this.index.noted(type);
  }

  /** One row: the event is the status. */
  running(): void {
    this.event("run_running", {});
  }

  /**
   * Saves an activation's outcome in one row, the event that ends or pauses the run
   * (run_current reads it from there); a run that ended (not paused) voids its pending approvals in the same transaction,
   * as `alongside` writes what goes with the outcome (an answer mail planned: answer-mail.ts).
   */
  outcome(outcome: RunOutcome, alongside?: () => void): void {
    const now = Date.now();
    this.host.ctx.storage.transactionSync(() => {
      alongside?.();
      if (!isPaused(outcome)) this.approvals.voidPending(now);
      const result = outcome.status === "succeeded" ? { output: outcome.output } : outcome.status === "failed" ? { error: outcome.error } : pauseData(outcome);
      this.event(`run_${outcome.status}`, { ...result, usage: outcome.usage });
    });
  }
}

/** A pause's event data: its timers, events and questions (`waiting_for`; a question by its id), when it has any. */
function pauseData(paused: Parameters<typeof waitingFor>[0]): { waiting_for?: WaitingFor[] } {
  const waiting = waitingFor(paused);
  return waiting.length ? { waiting_for: waiting } : {};
}
