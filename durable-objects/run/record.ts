/**
 * What a run records about itself besides its journal. Owns the writes to `events`:
 * each event is a row there (a status event, `run_queued` to `run_cancelled`, is also the
 * run's status: RUN_CURRENT in schema.ts; only lifecycle.ts writes those), then its log
 * line (log.ts) and its report to the run index (index-sync.ts). Needs from its host: the SQL.
 */

import { json } from "../sql";
import type { RunHost } from "./host";
import type { RunIndexSync } from "./index-sync";
import { logRunEvent } from "./log";

export class RunRecord {
  constructor(
    private readonly host: Pick<RunHost, "sql">,
    private readonly index: Pick<RunIndexSync, "noted">,
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
}
