import { DurableObject } from "cloudflare:workers";
import type { RunStatusName } from "../src/runs/types";
import type { PendingApprovalItem, RunListItem, RunQuery, RunSummary, Tombstone } from "../src/runs/index-types";
import type { RunIndexRpc } from "../src/runs/rpc";
import { StuckRunSweep, SWEEP_SCHEMA, SWEPT } from "./run-sweep";
import { json, parse, Sql, type JsonText } from "./sql";

/**
 * One secondary index row per run (created_at, id): the only order listings use.
 * Filters (status, worker, trigger) are checked on the rows that order walks.
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, worker TEXT NOT NULL, status TEXT NOT NULL, trigger_kind TEXT NOT NULL, trigger_name TEXT,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, usage TEXT, version INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at, id)`,
  `CREATE TABLE IF NOT EXISTS approvals (
    run_id TEXT NOT NULL, id TEXT NOT NULL, tool TEXT NOT NULL, worker_chain TEXT NOT NULL,
    created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (run_id, id)
  ) WITHOUT ROWID`,
  SWEEP_SCHEMA,
  `CREATE TABLE IF NOT EXISTS tombstones (
    id TEXT PRIMARY KEY, worker TEXT NOT NULL, retention_days REAL NOT NULL, finished_at INTEGER NOT NULL, deleted_at INTEGER NOT NULL
  )`,
];

/** A row of `runs`. */
interface IndexedRun {
  id: string;
  worker: string;
  status: RunStatusName;
  trigger_kind: string;
  trigger_name: string | null;
  created_at: number;
  updated_at: number;
  usage: JsonText<RunListItem["usage"]>;
  version: number;
}

/** A row of `approvals`, with its run's worker. */
interface IndexedApproval {
  run_id: string;
  id: string;
  tool: string;
  worker_chain: JsonText<string[]>;
  created_at: number;
  expires_at: number;
  worker: string;
}

/** Past every real cursor: the first page starts here. */
const TOP = { created_at: Number.MAX_SAFE_INTEGER, id: "\uffff" };
/** An inbox lists at most this many pending approvals (oldest first). */
export const MAX_PENDING_LISTED = 1000;

/**
 * The run index: one SQLite object (named "index") that every RunDO reports its
 * lifecycle to. It is a cache of the RunDOs, never the truth: each report is a
 * whole summary with a version, applied only when newer, so reports may arrive
 * late, twice or out of order and the index still converges on the last one. Its
 * alarm is the stuck-run sweep (run-sweep.ts), set while it lists a queued or running run.
 */
export class RunIndexDO extends DurableObject<Env> implements RunIndexRpc {
  protected readonly sql: Sql;
  private readonly sweeps: StuckRunSweep;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    for (const s of SCHEMA) this.sql.script(s);
    this.sweeps = new StuckRunSweep({ ctx, env, sql: this.sql, now: () => this.now(), apply: (s) => this.upsert(s) });
    void ctx.blockConcurrencyWhile(() => this.sweeps.dueIfLive());
  }

  /** Applies a run's summary if it is newer than what the index holds; its pending approvals replace the old ones. */
  async upsert(s: RunSummary): Promise<{ applied: boolean }> {
    const applied = this.apply(s);
    if (applied.applied && SWEPT.includes(s.status)) await this.sweeps.due();
    return applied;
  }

  /** The stuck-run sweep (run-sweep.ts). */
  override async alarm(): Promise<void> {
    await this.sweeps.sweep();
  }

  /** The clock the sweep measures a run's silence by (the test pool moves it forward). */
  protected now(): number {
    return Date.now();
  }

  private apply(s: RunSummary): { applied: boolean } {
    return this.ctx.storage.transactionSync(() => {
      const dead = this.sql.one<Pick<Tombstone, "deleted_at">>`SELECT deleted_at FROM tombstones WHERE id = ${s.id}`;
      if (dead && dead.deleted_at >= s.created_at) return { applied: false }; // a late report of a deleted run
      if (dead) this.sql.run`DELETE FROM tombstones WHERE id = ${s.id}`; // the id was started again
      const held = this.sql.one<Pick<IndexedRun, "version">>`SELECT version FROM runs WHERE id = ${s.id}`;
      if (held && held.version >= s.version) return { applied: false };
      this.sql.run`INSERT INTO runs (id, worker, status, trigger_kind, trigger_name, created_at, updated_at, usage, version)
        VALUES (${s.id}, ${s.worker}, ${s.status}, ${s.trigger.kind}, ${s.trigger.name ?? null}, ${s.created_at}, ${s.updated_at}, ${json(s.usage)}, ${s.version})
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, usage = excluded.usage, version = excluded.version`;
      const keep = new Set(s.pending.map((p) => p.id));
      for (const r of this.sql.all<Pick<IndexedApproval, "id">>`SELECT id FROM approvals WHERE run_id = ${s.id}`) {
        if (!keep.has(r.id)) this.sql.run`DELETE FROM approvals WHERE run_id = ${s.id} AND id = ${r.id}`;
      }
      for (const p of s.pending) {
        this.sql.run`INSERT INTO approvals (run_id, id, tool, worker_chain, created_at, expires_at)
          VALUES (${s.id}, ${p.id}, ${p.tool}, ${json(p.worker_chain)}, ${p.created_at}, ${p.expires_at}) ON CONFLICT DO NOTHING`;
      }
      return { applied: true };
    });
  }

  /** Newest first, keyset-paged on (created_at, id): runs that arrive meanwhile sort before the cursor, so none is missed or repeated. */
  async listRuns(q: RunQuery): Promise<{ runs: RunListItem[]; next: { created_at: number; id: string } | null }> {
    const after = q.after ?? TOP;
    const status = q.status ?? null;
    const worker = q.worker ?? null;
    const trigger = q.trigger ?? null;
    const rows = this.sql.all<IndexedRun>`SELECT * FROM runs
      WHERE (created_at, id) < (${after.created_at}, ${after.id}) AND created_at >= ${q.since ?? 0}
        AND (${status} IS NULL OR status = ${status}) AND (${worker} IS NULL OR worker = ${worker})
        AND (${trigger} IS NULL OR trigger_kind = ${trigger} OR trigger_name = ${trigger})
      ORDER BY created_at DESC, id DESC LIMIT ${q.limit + 1}`;
    const runs = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      worker: r.worker,
      status: r.status,
      trigger: { kind: r.trigger_kind, ...(r.trigger_name !== null ? { name: r.trigger_name } : {}) },
      created_at: r.created_at,
      updated_at: r.updated_at,
      usage: parse(r.usage),
    }));
    const last = runs.at(-1);
    return { runs, next: rows.length > q.limit && last ? { created_at: last.created_at, id: last.id } : null };
  }

  /** Every pending approval across runs, oldest first. */
  async pendingApprovals(): Promise<{ approvals: PendingApprovalItem[]; truncated: boolean }> {
    const rows = this.sql.all<IndexedApproval>`SELECT a.*, r.worker FROM approvals a JOIN runs r ON r.id = a.run_id
      ORDER BY a.created_at, a.run_id, a.id LIMIT ${MAX_PENDING_LISTED + 1}`;
    const approvals = rows.slice(0, MAX_PENDING_LISTED).map((r) => ({
      run_id: r.run_id,
      run_worker: r.worker,
      id: r.id,
      tool: r.tool,
      worker_chain: parse(r.worker_chain),
      created_at: r.created_at,
      expires_at: r.expires_at,
    }));
    return { approvals, truncated: rows.length > MAX_PENDING_LISTED };
  }

  /** Retention deleted the run: it leaves the index, a tombstone says why it is gone. */
  async retire(t: Tombstone): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.sql.run`DELETE FROM approvals WHERE run_id = ${t.id}`;
      this.sql.run`DELETE FROM runs WHERE id = ${t.id}`;
      this.sql.run`INSERT INTO tombstones (id, worker, retention_days, finished_at, deleted_at)
        VALUES (${t.id}, ${t.worker}, ${t.retention_days}, ${t.finished_at}, ${t.deleted_at})
        ON CONFLICT (id) DO UPDATE SET retention_days = excluded.retention_days, finished_at = excluded.finished_at, deleted_at = excluded.deleted_at`;
    });
  }

  async tombstone(id: string): Promise<Tombstone | null> {
    return this.sql.one<Tombstone>`SELECT * FROM tombstones WHERE id = ${id}` ?? null;
  }
}
