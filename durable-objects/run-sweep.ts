/**
 * The stuck-run sweep, from the run index's side (docs/operate.md, "Stuck runs"). The index's
 * alarm, every SWEEP_PERIOD_MS while the index lists a queued or running run, takes a page of
 * the runs it lists as queued or running and has not heard of for STUCK_AFTER_MS, oldest
 * first, and asks each run's object (RunDO `sweep`, run/sweep.ts): the run decides on its own
 * state, since the index's view may be stale. Owns the partial index `runs_live` of the
 * index's `runs` and one KV row (where a pass longer than a page goes on). Reads only the
 * rows of the object it runs in: an index spread over several objects sweeps each on its own.
 */

import type { RunStatusName } from "../src/runs/types";
import type { RunSummary, SweepAnswer } from "../src/runs/index-types";
import { runStub } from "../src/runs/rpc";
import type { Sql } from "./sql";

/** How often the index sweeps, while it lists a queued or running run. */
export const SWEEP_PERIOD_MS = 10 * 60_000;
/**
 * A run the index has not heard of for this long is asked: an alarm runs at most 15 minutes,
 * and the platform's six retries of a failed one add about two minutes of back-off; a run
 * whose alarm is still set or running answers that it is not stuck, whatever its age.
 */
export const STUCK_AFTER_MS = 30 * 60_000;
/** Runs asked per sweep, at most. */
export const SWEEP_PAGE = 50;

/** The statuses a sweep asks about: a run in them has an alarm set or running, unless the platform dropped it. */
export const SWEPT: readonly RunStatusName[] = ["queued", "running"];

/** Only the runs a sweep may ask about, in the order it asks them: a sweep with nothing to ask reads no row of `runs`. */
export const SWEEP_SCHEMA = `CREATE INDEX IF NOT EXISTS runs_live ON runs (updated_at, id) WHERE status IN ('queued', 'running')`;

/** Where a pass that did not fit one page goes on (KV). */
const CURSOR = "sweep-cursor";
interface Cursor {
  updated_at: number;
  id: string;
}

/** What one sweep did: runs asked, and what they answered (`unreachable`: the request failed). */
export type SweepTally = { asked: number; unreachable: number } & Record<SweepAnswer["verdict"], number>;

export interface SweepHost {
  ctx: DurableObjectState;
  env: Env;
  sql: Sql;
  /** The index's clock (a seam the test pool moves forward). */
  now(): number;
  /** A summary a run sent back, newer than the index's: applied as its report would have been. */
  apply(s: RunSummary): Promise<unknown>;
}

export class StuckRunSweep {
  /** The index's alarm is known to be set (memory: a new instance looks once). */
  private armed = false;

  constructor(private readonly host: SweepHost) {}

  /** A queued or running run was reported: a sweep is due within a period (the alarm, set once). */
  async due(): Promise<void> {
    if (this.armed) return;
    const { storage } = this.host.ctx;
    if ((await storage.getAlarm()) === null) await storage.setAlarm(Date.now() + SWEEP_PERIOD_MS);
    this.armed = true;
  }

  /** A sweep is due if the index lists a queued or running run (a new instance: the runs listed before a deploy that brought the sweep). */
  async dueIfLive(): Promise<void> {
    if (this.host.sql.one`SELECT 1 AS live FROM runs WHERE status IN ('queued', 'running') LIMIT 1`) await this.due();
  }

  /** The index's alarm: one page of runs asked, then the next sweep, if the index still lists a queued or running run. */
  async sweep(): Promise<SweepTally> {
    this.armed = false; // the alarm that runs was taken off
    const tally = await this.page();
    await this.dueIfLive();
    const { asked, ok, ...news } = tally;
    if (Object.values(news).some((n) => n > 0)) console.log(JSON.stringify({ edgework: "runs_swept", asked, ok, ...news }));
    return tally;
  }

  /** The next page of candidates, oldest first from where the last sweep stopped; each run asked in turn (one connection). */
  private async page(): Promise<SweepTally> {
    const { ctx, env, sql } = this.host;
    const from = ctx.storage.kv.get<Cursor>(CURSOR) ?? { updated_at: 0, id: "" };
    const rows = sql.all<{ id: string; updated_at: number; version: number }>`SELECT id, updated_at, version FROM runs
      WHERE status IN ('queued', 'running') AND updated_at < ${this.host.now() - STUCK_AFTER_MS} AND (updated_at, id) > (${from.updated_at}, ${from.id})
      ORDER BY updated_at, id LIMIT ${SWEEP_PAGE + 1}`;
    const page = rows.slice(0, SWEEP_PAGE);
    const last = page.at(-1);
    if (rows.length > SWEEP_PAGE && last) ctx.storage.kv.put<Cursor>(CURSOR, { updated_at: last.updated_at, id: last.id });
    else if (from.id !== "") ctx.storage.kv.delete(CURSOR);
    const tally: SweepTally = { asked: page.length, ok: 0, woken: 0, failed: 0, gone: 0, unreachable: 0 };
    for (const run of page) {
      let answer: SweepAnswer;
      try {
        answer = await runStub(env, run.id).sweep(run.version);
      } catch {
        tally.unreachable++; // busy past a limit, or reset: asked again next pass
        continue;
      }
      tally[answer.verdict]++;
      if (answer.verdict === "gone") this.forget(run.id, run.version);
      else if (answer.summary) await this.host.apply(answer.summary);
    }
    return tally;
  }

  /** A run its object does not have (never started, or deleted): it leaves the index, unless a report came meanwhile. */
  private forget(id: string, version: number): void {
    const { ctx, sql } = this.host;
    ctx.storage.transactionSync(() => {
      if (!sql.one`SELECT 1 AS held FROM runs WHERE id = ${id} AND version = ${version}`) return;
      sql.run`DELETE FROM approvals WHERE run_id = ${id}`;
      sql.run`DELETE FROM runs WHERE id = ${id}`;
    });
  }
}
