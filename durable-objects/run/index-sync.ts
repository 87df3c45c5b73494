/**
 * A run's reports to the run index. Owns one KV row, INDEX_HOME (the index object it reports to),
 * and no table: reads `run`, `approvals`, `events` and `journal` to build the summary. Needs from
 * its host: `ctx` (waitUntil, KV), `env` (the RUN_INDEX binding), the SQL, `wake` (a retry) and `io`.
 */

import { runIndexObject } from "../../src/runs/rpc";
import { isIndexObject, LEGACY_INDEX } from "../../src/runs/index-shards";
import { triggerRef, type RunSummary } from "../../src/runs/index-types";
import { logRunEvent } from "./log";
import { runUsage } from "./usage";
import type { ApprovalRow, RunRow } from "../rows";
import { APPROVALS_CURRENT, RUN_CURRENT } from "../schema";
import { parse } from "../sql";
import type { RunHost } from "./host";
import type { Attributes } from "../../src/engine/attributes";

/** Run events that change what the index shows (status, pending approvals, usage). */
const INDEXED = new Set([
  "run_queued",
  "run_running",
  "run_awaiting_approval",
  "run_waiting",
  "run_succeeded",
  "run_failed",
  "run_cancelled",
  "approval_recorded",
  "wait_ended",
  "attribute_set",
]);

/** KV: the index object this run reports to, chosen when it was queued (src/runs/index-shards.ts). */
const INDEX_HOME = "index_home";

/**
 * The index object a run reports to (and retention retires it from): the shard it chose when it was
 * queued, or, for a run queued by a version before the index was sharded (no INDEX_HOME), the legacy
 * index that already holds it, so a run paused under one version resumes and lists under the next.
 */
export function indexHome(storage: DurableObjectStorage): string {
  const home = storage.kv.get<string>(INDEX_HOME);
  return typeof home === "string" && isIndexObject(home) ? home : LEGACY_INDEX;
}

/**
 * Keeps the run index up to date from one RunDO without ever blocking or failing
 * the run. A lifecycle event schedules one report (the whole summary), sent after
 * the event's transaction commits and never awaited by the run. The "dirty"
 * marker is the gap between the run's version (its last event and journal seqs: durable) and the last
 * version the index acknowledged to this instance (memory only: writing it would
 * cost a row per report). A report that failed, or was lost with an evicted object,
 * is re-sent at the run's next alarm, which a failure pulls near; a new instance
 * knows of no acknowledgement, so its first alarm re-sends once (the index ignores
 * a version it holds, writing nothing).
 */
export class RunIndexSync {
  private chain: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Set while a report has failed: every alarm the run arms is pulled to this time. */
  private retryAt: number | undefined;
  /** The newest version the index acknowledged to this instance. */
  private acked = 0;

  /** The index object reports go to (read once per instance). */
  private home: string | undefined;

  constructor(
    private readonly host: Pick<RunHost, "ctx" | "env" | "sql" | "wake" | "io">,
    /** How long a failed report waits before it is sent again. */
    private readonly retryMs: number,
    /** The run's attributes as they stand (attributes.ts). */
    private readonly attributes: () => Attributes,
    /** The index object a new run reports to (src/runs/index-shards.ts `indexShardOf`). */
    private readonly newHome: (runId: string) => string,
  ) {}

  /** Called for every run event, inside its transaction: lifecycle events schedule a report. */
  noted(type: string): void {
    // `run_queued` is a run's first event, written with its first row (lifecycle.ts `start`): its shard is chosen once, here.
    if (type === "run_queued") this.settle();
    if (!INDEXED.has(type) || this.scheduled) return;
    this.scheduled = true;
    this.host.ctx.waitUntil(this.enqueue());
  }

  /** Waits for reports in flight, then re-sends if the index is behind (at every alarm, before anything else). */
  async flush(): Promise<void> {
    await this.chain;
    if (this.behind()) await this.enqueue();
  }

  /** The run's summary when it is newer than version `held` (what the index holds: the stuck-run sweep's question), else null. */
  newerThan(held: number): RunSummary | null {
    return this.version() > held ? this.summary() : null;
  }

  /** An alarm time, brought forward to the retry of a failed report. */
  clamp(at: number): number {
    return this.retryAt === undefined ? at : Math.min(at, this.retryAt);
  }

  private settle(): void {
    const { ctx, sql } = this.host;
    const run = sql.one<Pick<RunRow, "id">>`SELECT id FROM ${RUN_CURRENT} AS run_current`;
    if (!run || ctx.storage.kv.get(INDEX_HOME) !== undefined) return;
    this.home = this.newHome(run.id);
    ctx.storage.kv.put(INDEX_HOME, this.home);
  }

  /** Reports run one after another, so the index never sees them out of order from one activation. */
  private enqueue(): Promise<void> {
    this.chain = this.chain.then(() => {
      this.scheduled = false;
      return this.report();
    });
    return this.chain;
  }

  private async report(): Promise<void> {
    const summary = this.summary();
    if (!summary) return;
    const { env, sql } = this.host;
    try {
      this.home ??= indexHome(this.host.ctx.storage);
      const home = this.home;
      await this.host.io("index.report", () => runIndexObject(env, home).upsert(summary));
      this.acked = Math.max(this.acked, summary.version);
      if (!this.behind()) this.retryAt = undefined;
    } catch {
      logRunEvent(sql, "index_report_failed", { version: summary.version });
      this.retryAt = Date.now() + this.retryMs;
      await this.host.wake(this.retryAt);
    }
  }

  private behind(): boolean {
    return this.acked < this.version();
  }

  /** Grows with every event and every journal step (a decision is only a step), so each report is newer than the last. */
  private version(): number {
    return this.host.sql.one<{ v: number }>`SELECT (SELECT coalesce(max(seq), 0) FROM events) + (SELECT coalesce(max(seq), 0) FROM journal) AS v`!.v;
  }

  private summary(): RunSummary | null {
    const { sql } = this.host;
    const r = sql.one<
      Pick<RunRow, "id" | "worker" | "status" | "trigger" | "usage" | "created_at" | "updated_at">
    >`SELECT id, worker, status, trigger, usage, created_at, updated_at FROM ${RUN_CURRENT} AS run_current`;
    if (!r) return null;
    const pending = sql.all<
      Pick<ApprovalRow, "id" | "tool" | "worker_chain" | "created_at" | "expires_at">
    >`SELECT id, tool, worker_chain, created_at, expires_at FROM ${APPROVALS_CURRENT} AS approvals_current WHERE status = 'pending' ORDER BY created_at, id`;
    return {
      id: r.id,
      worker: r.worker,
      status: r.status,
      trigger: triggerRef(parse(r.trigger)),
      attributes: this.attributes(),
      created_at: r.created_at,
      updated_at: r.updated_at,
      usage: runUsage(sql, r.usage),
      version: this.version(),
      pending: pending.map((p) => ({ id: p.id, tool: p.tool, worker_chain: parse(p.worker_chain), created_at: p.created_at, expires_at: p.expires_at })),
    };
  }
}
