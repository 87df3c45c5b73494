/**
 * Retention of a finished run. Deletes every table of the run's object and leaves
 * one KV row (the tombstone). Needs from its host: `ctx` (storage), `env`
 * (RUN_RETENTION_DAYS, RUN_INDEX), the SQL, `arm` and `io`; and the lifecycle (the
 * run's status, its alarm cleared).
 */

import { numberVar } from "../../src/config";
import { runIndexObject } from "../../src/runs/rpc";
import { indexHome } from "./index-sync";
import { logRunEvent } from "./log";
import { TERMINAL, type RunStatusName } from "../../src/runs/types";
import type { RunRow } from "../rows";
import { RUN_CURRENT } from "../schema";
import type { RunHost } from "./host";
import type { RunLifecycle } from "./lifecycle";

const DAY_MS = 86_400_000;
/** A retention deletion that could not reach the index is tried again this much later. */
const RETIRE_RETRY_MS = 3_600_000;

/** What a deleted run leaves in its object: one KV row, so a replayed start of its id starts nothing. */
const TOMBSTONE = "deleted-run";
export interface RunTombstone {
  status: RunStatusName;
  deleted_at: number;
}

/** The tombstone a retention deletion left in this object, if any. */
export const tombstoneOf = (ctx: DurableObjectState) => ctx.storage.kv.get<RunTombstone>(TOMBSTONE);

/** `RUN_RETENTION_DAYS` (default 30): how long a finished run keeps its storage. */
export const retentionDays = (env: Env) => numberVar(env, "RUN_RETENTION_DAYS", 30);

/** When a run that finished at `finishedAt` deletes itself: its one alarm once it has ended. */
export const deletionDue = (env: Env, finishedAt: number) => finishedAt + retentionDays(env) * DAY_MS;

/**
 * The alarm of a finished run. Early (it was pulled in to re-send an index
 * report), it re-arms for the deletion. Due, it tells the index first (which
 * keeps a tombstone, so GET /runs/:id can say why the run is gone), then deletes
 * every row and the alarm. Only a one-row tombstone stays in its object: a signed
 * delivery replayed after the retention (webhook signatures carry no time) or a
 * redelivered email must not start the run again. Returns whether it deleted the run.
 */
export async function finishedRunAlarm(
  { ctx, env, sql, arm, io }: Pick<RunHost, "ctx" | "env" | "sql" | "arm" | "io">,
  lifecycle: Pick<RunLifecycle, "status" | "clear">,
): Promise<boolean> {
  const run = sql.one<Pick<RunRow, "id" | "worker" | "status" | "updated_at">>`SELECT id, worker, status, updated_at FROM ${RUN_CURRENT} AS run_current`!;
  const due = deletionDue(env, run.updated_at);
  const now = Date.now();
  if (now < due) {
    await arm(due);
    return false;
  }
  const days = retentionDays(env);
  try {
    await io("retention.retire", () =>
      runIndexObject(env, indexHome(ctx.storage)).retire({
        id: run.id,
        worker: run.worker,
        retention_days: days,
        finished_at: run.updated_at,
        deleted_at: now,
      }),
    );
  } catch {
    // The run stays whole until the index knows it is gone (it never lists a run that cannot be read).
    await arm(now + RETIRE_RETRY_MS);
    return false;
  }
  // Read again after the await: only an ended run is deleted (one past its retention takes no message: conversation.ts).
  if (!TERMINAL.includes(lifecycle.status()!)) return false;
  logRunEvent(sql, "run_deleted", { retention_days: days });
  await lifecycle.clear();
  await ctx.storage.deleteAll();
  ctx.storage.kv.put<RunTombstone>(TOMBSTONE, { status: run.status, deleted_at: now });
  return true;
}
