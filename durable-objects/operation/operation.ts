import { DurableObject } from "cloudflare:workers";
import {
  MAX_ATTEMPTS,
  MAX_FAILURES_SHOWN,
  OPERATION_RATE,
  OPERATION_RETENTION_MS,
  type OperationRpc,
  type OperationSpec,
  type OperationView,
} from "../../src/operations/api";
import type { RunFilter } from "../../src/runs/index-types";
import { runIndex } from "../../src/runs/rpc";
import { json, parse, Sql } from "../sql";
import { actOn, type Outcome } from "./act";
import { migrateOperation, type Batch, type OperationRow } from "./schema";

/** An alarm that dies mid-batch (an eviction, a deploy) is followed by another this much later (the runtime's retry may come sooner). */
const LEASE_MS = 60_000;

/**
 * One bulk operation (`POST /operations`): walks the runs its filter matches, newest first from
 * the instant it began (runs created later are never touched), a page per alarm, and acts on each
 * (act.ts) a few at a time. The cursor and the page in hand are in its SQLite (schema.ts), so a
 * restart goes on where it was: a page cut off is acted on again, a page done never. Reports its
 * progress, can be cancelled, and is deleted OPERATION_RETENTION_MS after it ended.
 *
 * A run is matched when its page is read: one that stopped matching before (another operation
 * cancelled it, say) is left alone, one that starts matching after its page was read is not
 * reached. The index trails the runs by a report; each run's own object has the last word (a
 * cancel of a run that ended meanwhile is refused there, and counted skipped).
 */
export class OperationDO extends DurableObject<Env> implements OperationRpc {
  protected readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateOperation(this.sql);
    // A running operation always has an alarm: one whose alarm was dropped (retries spent) goes on when next asked.
    void ctx.blockConcurrencyWhile(async () => {
      if (this.row()?.status === "running" && (await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(this.soon());
    });
  }

  async begin(spec: OperationSpec): Promise<{ ok: true; created: boolean } | { ok: false; error: string }> {
    const held = this.row();
    if (held) {
      const same = held.action === spec.action && held.definitions === spec.definitions && held.filter === json(spec.filter);
      return same ? { ok: true, created: false } : { ok: false, error: `operation ${spec.id} exists with another action or filter` };
    }
    // Newest first from its own instant: (created_at, id) below (created_at + 1, "") is every run created up to it.
    this.sql.run`INSERT INTO operation (id, action, filter, definitions, status, cursor_at, cursor_id, created_at, updated_at)
      VALUES (${spec.id}, ${spec.action}, ${json(spec.filter)}, ${spec.definitions}, 'running', ${spec.created_at + 1}, '', ${spec.created_at}, ${spec.created_at})`;
    await this.ctx.storage.setAlarm(this.soon());
    return { ok: true, created: true };
  }

  async view(): Promise<OperationView | null> {
    const op = this.row();
    if (!op) return null;
    const failures = this.sql.all<{ run_id: string; reason: string; at: number }>`
      SELECT run_id, reason, at FROM failures ORDER BY at, run_id LIMIT ${MAX_FAILURES_SHOWN + 1}`;
    return {
      id: op.id,
      action: op.action,
      filter: parse(op.filter),
      definitions: op.definitions,
      status: op.status,
      counts: { done: op.done, failed: op.failed, skipped: op.skipped },
      failures: failures.slice(0, MAX_FAILURES_SHOWN),
      failures_truncated: failures.length > MAX_FAILURES_SHOWN,
      created_at: op.created_at,
      updated_at: op.updated_at,
      finished_at: op.finished_at,
    };
  }

  async cancel(): Promise<OperationView | null> {
    const op = this.row();
    if (!op) return null;
    if (op.status === "running") {
      const now = Date.now();
      this.sql.run`UPDATE operation SET status = 'cancelled', batch = NULL, updated_at = ${now}, finished_at = ${now}`;
      await this.ctx.storage.setAlarm(now + OPERATION_RETENTION_MS);
    }
    return this.view();
  }

  /** One page: the one cut off before, or the next from the index; acted on, then its outcomes and the cursor past it in one write. */
  override async alarm(): Promise<void> {
    const op = this.row();
    if (!op) return;
    if (op.status !== "running") {
      if (Date.now() >= (op.finished_at ?? 0) + OPERATION_RETENTION_MS) {
        await this.ctx.storage.deleteAll();
        migrateOperation(this.sql); // this instance answers as for an id never used
      }
      return;
    }
    await this.ctx.storage.setAlarm(Date.now() + LEASE_MS);
    const held = parse<Batch | null>(op.batch);
    if (held) this.sql.run`UPDATE operation SET batch = ${json({ ...held, attempts: held.attempts + 1 })}`;
    const batch = held ? { ...held, attempts: held.attempts + 1 } : await this.nextPage(op);
    if (!batch) return; // cancelled while the page was read
    // A page taken up again was cut off (or had runs with no answer): this operation may have acted on them already.
    const outcomes = await this.actOnAll(op, batch.runs, held !== null);
    this.settle(batch, outcomes);
    const after = this.row()!;
    await this.ctx.storage.setAlarm(after.status === "running" ? this.later() : after.finished_at! + OPERATION_RETENTION_MS);
  }

  /** The next page of matching runs after the cursor, written as the batch in hand before any run is acted on. */
  private async nextPage(op: OperationRow): Promise<Batch | null> {
    const page = await runIndex(this.env).listRuns({
      ...parse(op.filter),
      limit: OPERATION_RATE.batch,
      after: { created_at: op.cursor_at, id: op.cursor_id },
    });
    if (this.row()?.status !== "running") return null;
    const last = page.runs.at(-1);
    const batch: Batch = {
      runs: page.runs.map((r) => r.id),
      end: last ? { created_at: last.created_at, id: last.id } : { created_at: op.cursor_at, id: op.cursor_id },
      more: page.next !== null,
      attempts: 1,
    };
    this.sql.run`UPDATE operation SET batch = ${json(batch)}`;
    return batch;
  }

  /** Acts on each run, OPERATION_RATE.parallel at a time; none is started once the operation was cancelled. */
  private async actOnAll(op: OperationRow, runs: string[], again: boolean): Promise<Map<string, Outcome>> {
    const outcomes = new Map<string, Outcome>();
    const queue = [...runs];
    const status = parse<RunFilter>(op.filter).status;
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        if (this.row()?.status !== "running") return;
        outcomes.set(id, await actOn(this.env, op, id, again, status));
        await this.acted(id);
      }
    };
    await Promise.all(Array.from({ length: OPERATION_RATE.parallel }, worker));
    return outcomes;
  }

  /**
   * The page's outcomes in one transaction: counts and failures, then the cursor past the page (or
   * the runs with no answer kept for the next alarm, until MAX_ATTEMPTS), and `done` after the last.
   * A cancel that came meanwhile keeps what was done and goes no further.
   */
  private settle(batch: Batch, outcomes: Map<string, Outcome>): void {
    this.ctx.storage.transactionSync(() => {
      const now = Date.now();
      const count = { done: 0, failed: 0, skipped: 0 };
      const unanswered: string[] = [];
      const lastTry = batch.attempts >= MAX_ATTEMPTS;
      for (const [id, o] of outcomes) {
        if (o.state === "retry" && !lastTry) {
          unanswered.push(id);
          continue;
        }
        const state = o.state === "retry" ? "failed" : o.state;
        count[state]++;
        if (state === "failed" && "reason" in o) this.sql.run`INSERT OR REPLACE INTO failures (run_id, reason, at) VALUES (${id}, ${o.reason}, ${now})`;
      }
      this.sql
        .run`UPDATE operation SET done = done + ${count.done}, failed = failed + ${count.failed}, skipped = skipped + ${count.skipped}, updated_at = ${now}`;
      if (this.row()!.status !== "running") return;
      if (unanswered.length) {
        this.sql.run`UPDATE operation SET batch = ${json({ ...batch, runs: unanswered })}`;
        return;
      }
      const ended = !batch.more;
      this.sql.run`UPDATE operation SET batch = NULL, cursor_at = ${batch.end.created_at}, cursor_id = ${batch.end.id},
        status = ${ended ? "done" : "running"}, finished_at = ${ended ? now : null}`;
    });
  }

  private row(): OperationRow | undefined {
    return this.sql.one<OperationRow>`SELECT * FROM operation`;
  }

  // ——— Seams a subclass may override (the test pool's: tests/support/test-operation.ts) ———

  /** When the first batch runs. */
  protected soon(): number {
    return Date.now();
  }

  /** When the next batch runs: the rate's interval from now. */
  protected later(): number {
    return Date.now() + OPERATION_RATE.intervalMs;
  }

  /** After each run was acted on (a test may cut the object off there). */
  protected async acted(_runId: string): Promise<void> {}
}
