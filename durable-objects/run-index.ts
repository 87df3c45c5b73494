import { DurableObject } from "cloudflare:workers";
import { sortedAttributes, type Attributes } from "../src/engine/attributes";
import {
  MAX_ATTRIBUTE_FILTERS,
  MAX_PENDING_LISTED,
  type PendingApprovalItem,
  type RunListItem,
  type RunQuery,
  type RunSummary,
  type Tombstone,
} from "../src/runs/index-types";
import type { RunIndexRpc } from "../src/runs/rpc";
import { StuckRunSweep, SWEPT } from "./run-sweep";
import { indexAttributes, matchingRuns, type IndexedRun } from "./run-index/query";
import { migrateIndex } from "./run-index/schema";
import { json, parse, Sql, type JsonText } from "./sql";

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

/**
 * One object of the run index (src/runs/index-shards.ts: a shard, or the single object of versions
 * before sharding), which the RunDOs it holds report their lifecycle to. It is a cache of the RunDOs, never the truth: each report is a
 * whole summary with a version, applied only when newer, so reports may arrive
 * late, twice or out of order and the index still converges on the last one. Its
 * alarm is the stuck-run sweep (run-sweep.ts) of its own runs, set while it lists a queued or running run.
 */
export class RunIndexDO extends DurableObject<Env> implements RunIndexRpc {
  protected readonly sql: Sql;
  private readonly sweeps: StuckRunSweep;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateIndex(this.sql);
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
      const held = this.sql.one<Pick<IndexedRun, "version" | "attributes">>`SELECT version, attributes FROM runs WHERE id = ${s.id}`;
      if (held && held.version >= s.version) return { applied: false };
      const attributes = sortedAttributes(s.attributes ?? {});
      const text = Object.keys(attributes).length ? json(attributes) : null;
      this.sql.run`INSERT INTO runs (id, worker, status, trigger_kind, trigger_name, created_at, updated_at, usage, version, attributes)
        VALUES (${s.id}, ${s.worker}, ${s.status}, ${s.trigger.kind}, ${s.trigger.name ?? null}, ${s.created_at}, ${s.updated_at}, ${json(s.usage)}, ${s.version}, ${text})
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, usage = excluded.usage, version = excluded.version,
          attributes = excluded.attributes`;
      if ((held?.attributes ?? null) !== text) indexAttributes(this.sql, s, parse<Attributes | null>(held?.attributes) ?? {}, attributes);
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
    if (Object.keys(q.attributes ?? {}).length > MAX_ATTRIBUTE_FILTERS) throw new Error(`at most ${MAX_ATTRIBUTE_FILTERS} attribute criteria per listing`);
    const rows = matchingRuns(this.sql, q);
    const runs = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      worker: r.worker,
      status: r.status,
      trigger: { kind: r.trigger_kind, ...(r.trigger_name !== null ? { name: r.trigger_name } : {}) },
      attributes: parse<Attributes | null>(r.attributes) ?? {},
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
      const held = this.sql.one<Pick<IndexedRun, "created_at" | "attributes">>`SELECT created_at, attributes FROM runs WHERE id = ${t.id}`;
      if (held) indexAttributes(this.sql, { id: t.id, created_at: held.created_at }, parse<Attributes | null>(held.attributes) ?? {}, {});
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
