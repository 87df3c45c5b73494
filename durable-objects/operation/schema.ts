import type { OperationAction } from "../../src/operations/api";
import type { JsonText, Sql } from "../sql";
import type { RunFilter } from "../../src/runs/index-types";

/**
 * An operation's object holds one `operation` row (its spec, where its walk of the index is, the
 * batch in hand, its counts) and one `failures` row per run it could not act on. No row per run
 * acted on: each run is in exactly one page of the walk, and a page's outcomes and the cursor past
 * it are written in one transaction, so no run is acted on in two batches, and none is passed over.
 */
const TABLES = [
  `CREATE TABLE IF NOT EXISTS operation (
    id TEXT PRIMARY KEY, action TEXT NOT NULL, filter TEXT NOT NULL, definitions TEXT NOT NULL, status TEXT NOT NULL,
    cursor_at INTEGER NOT NULL, cursor_id TEXT NOT NULL, batch TEXT,
    done INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS failures (run_id TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID`,
];

export const migrateOperation = (sql: Sql) => {
  for (const t of TABLES) sql.script(t);
};

/**
 * The page in hand: its runs still to act on, the cursor past it and whether the walk goes on,
 * and how many times it was taken up. Written before the first action, cleared with the outcomes:
 * an alarm that finds one was cut off, and acts on those runs again (each action is safe twice).
 */
export interface Batch {
  runs: string[];
  end: { created_at: number; id: string };
  more: boolean;
  attempts: number;
}

export interface OperationRow {
  id: string;
  action: OperationAction;
  filter: JsonText<RunFilter>;
  definitions: "current" | "pinned";
  status: "running" | "done" | "cancelled";
  cursor_at: number;
  cursor_id: string;
  batch: JsonText<Batch> | null;
  done: number;
  failed: number;
  skipped: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}
