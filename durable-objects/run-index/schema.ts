import { SWEEP_SCHEMA } from "../run-sweep";
import type { Sql } from "../sql";

/**
 * The run index's tables. `runs`: one row per run, and one secondary index (created_at, id), the
 * order every listing walks. `run_attributes`: one row per (run, attribute), keyed by
 * (name, value, created_at, run_id), so `attr.<name>=<value>` walks exactly its runs newest first
 * (the same order as `runs`), never the whole table: WITHOUT ROWID, the key is the row. `runs_live`:
 * the queued and running runs, for the stuck-run sweep (run-sweep.ts).
 */
const RUNS = `CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, worker TEXT NOT NULL, status TEXT NOT NULL, trigger_kind TEXT NOT NULL, trigger_name TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, usage TEXT, version INTEGER NOT NULL, attributes TEXT
)`;
const RUNS_BY_CREATED = `CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at, id)`;
const RUN_ATTRIBUTES = `CREATE TABLE IF NOT EXISTS run_attributes (
  name TEXT NOT NULL, value TEXT NOT NULL, created_at INTEGER NOT NULL, run_id TEXT NOT NULL,
  PRIMARY KEY (name, value, created_at, run_id)
) WITHOUT ROWID`;
const APPROVALS = `CREATE TABLE IF NOT EXISTS approvals (
  run_id TEXT NOT NULL, id TEXT NOT NULL, tool TEXT NOT NULL, worker_chain TEXT NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (run_id, id)
) WITHOUT ROWID`;
const TOMBSTONES = `CREATE TABLE IF NOT EXISTS tombstones (
  id TEXT PRIMARY KEY, worker TEXT NOT NULL, retention_days REAL NOT NULL, finished_at INTEGER NOT NULL, deleted_at INTEGER NOT NULL
)`;

/** Version 2: attributes (the runs' JSON, and their own table). */
const LATEST = 2;

/**
 * Makes the tables, or upgrades an index made before versions were kept (version 1: its `runs`
 * has no `attributes`, and there is no `meta`): the object of a deployment that updates keeps its rows.
 */
export function migrateIndex(sql: Sql): void {
  sql.script(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
  const version = Number(sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'schema_version'`?.value ?? 0);
  if (version >= LATEST) return;
  const before = version === 0 && sql.one`SELECT 1 AS made FROM sqlite_master WHERE type = 'table' AND name = 'runs'` !== undefined;
  if (before) sql.script(`ALTER TABLE runs ADD COLUMN attributes TEXT`);
  for (const s of [RUNS, RUNS_BY_CREATED, RUN_ATTRIBUTES, APPROVALS, SWEEP_SCHEMA, TOMBSTONES]) sql.script(s);
  sql.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ${String(LATEST)})`;
}
