import type { Sql } from "./sql";

/** Toolset state by scope; both Durable Objects keep it. WITHOUT ROWID: the key is the row. */
const STATE = `
CREATE TABLE IF NOT EXISTS state (
  scope TEXT NOT NULL, scope_id TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, scope_id, namespace, key)
) WITHOUT ROWID;`;

/**
 * One run per RunDO. The journal and events are append-only and have no secondary
 * index, so each step costs one row written (the SSE cursor is their seq columns).
 * Tables keyed by text are WITHOUT ROWID: a rowid table would keep its text key in
 * a second b-tree, one more row written per insert. (Objects created before keep
 * their rowid tables: same columns, same queries.)
 */
const RUN_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS run (
    id TEXT PRIMARY KEY, worker TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
    approval_mode TEXT NOT NULL, budget TEXT NOT NULL, trigger TEXT,
    output TEXT, error TEXT, usage TEXT, retries INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY, key TEXT NOT NULL, call_path TEXT NOT NULL, worker_chain TEXT NOT NULL,
    tool TEXT NOT NULL, args TEXT NOT NULL, description TEXT NOT NULL, notify TEXT,
    status TEXT NOT NULL, note TEXT, decided_by TEXT,
    created_at INTEGER NOT NULL, decided_at INTEGER, expires_at INTEGER NOT NULL
  ) WITHOUT ROWID`,
  // after_step: the journal seq this event follows, so SSE merges both logs in true order.
  `CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, after_step INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL)`,
  // Each approval email, planned or sent: request, reminder, escalation (one row per recipient).
  // sent_at is claimed before sending, so a crash never sends one twice (at most once).
  `CREATE TABLE IF NOT EXISTS approval_mail (
    approval_id TEXT NOT NULL, kind TEXT NOT NULL, recipient TEXT NOT NULL, due_at INTEGER NOT NULL, sent_at INTEGER,
    PRIMARY KEY (approval_id, kind, recipient)
  ) WITHOUT ROWID`,
  STATE,
  // Version 3: the catalog a run started on, in its row (written with it: no row of its own).
  // Added, not declared above, so one list upgrades version-2 objects and builds new ones.
  `ALTER TABLE run ADD COLUMN catalog_version TEXT`,
  `ALTER TABLE run ADD COLUMN catalog_files TEXT`,
];

const SCHEMA_VERSION = 3;

/**
 * The run row as it stands. A status change while the run lives writes only its
 * event (one row, not an UPDATE as well): status and updated_at come from the
 * newest lifecycle event; an ended run's come from its row, written with the
 * outcome. Before this view existed every status change wrote both, so the two
 * agree for older runs too. Unversioned: objects of any schema version get it.
 */
const RUN_CURRENT = `
CREATE VIEW IF NOT EXISTS run_current AS
SELECT r.id, r.worker, r.input, r.approval_mode, r.budget, r.trigger, r.output, r.error, r.usage, r.retries, r.created_at,
  CASE WHEN r.status IN ('succeeded', 'failed', 'cancelled') OR e.type IS NULL THEN r.status
       WHEN e.type = 'approval_recorded' THEN 'running' ELSE substr(e.type, 5) END AS status,
  CASE WHEN r.status IN ('succeeded', 'failed', 'cancelled') THEN r.updated_at ELSE max(r.updated_at, coalesce(e.at, 0)) END AS updated_at
FROM run r LEFT JOIN (
  SELECT type, at FROM events WHERE type IN ('run_queued', 'run_running', 'run_awaiting_approval', 'approval_recorded') ORDER BY seq DESC LIMIT 1
) e ON 1`;

function migrate(sql: Sql, statements: string[]): void {
  sql.script(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
  const row = sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'schema_version'`;
  if (Number(row?.value ?? 0) >= SCHEMA_VERSION) return;
  for (const s of statements) sql.script(s);
  sql.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ${String(SCHEMA_VERSION)})`;
}

export function migrateRun(sql: Sql): void {
  migrate(sql, RUN_SCHEMA);
  sql.script(RUN_CURRENT);
}
export const migrateGlobal = (sql: Sql) => migrate(sql, [STATE]);
