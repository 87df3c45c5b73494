import { DurableObject } from "cloudflare:workers";
import type { ScheduleEntry, ScheduleIndexRpc } from "../../src/schedules/api";
import { MAX_SCHEDULES } from "../../src/schedules/spec";
import { json, parse, Sql, type JsonText } from "../sql";

/** A row of `schedules`: an entry, its origin as JSON. */
type EntryRow = Omit<ScheduleEntry, "created_by"> & { created_by: JsonText<ScheduleEntry["created_by"]> };

/**
 * The listing of a deployment's runtime schedules (`GET /schedules`): one object, one row per
 * schedule, written when one is created, paused, resumed or deleted; a fire never touches it, so
 * it is on no schedule's hot path. It also holds the bound on their number (MAX_SCHEDULES).
 */
export class ScheduleIndexDO extends DurableObject<Env> implements ScheduleIndexRpc {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.sql.script(`CREATE TABLE IF NOT EXISTS schedules (
      id TEXT PRIMARY KEY, worker TEXT NOT NULL, cron TEXT, every TEXT, timezone TEXT, description TEXT, status TEXT NOT NULL,
      created_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
    ) WITHOUT ROWID`);
  }

  async add(e: ScheduleEntry): Promise<{ ok: true } | { ok: false; error: string }> {
    if (this.sql.one`SELECT 1 AS listed FROM schedules WHERE id = ${e.id}`) return { ok: true };
    const n = this.sql.one<{ n: number }>`SELECT count(*) AS n FROM schedules`!.n;
    if (n >= MAX_SCHEDULES) return { ok: false, error: `this deployment has ${n} schedules, the most it may have (${MAX_SCHEDULES}); delete some first` };
    this.sql.run`INSERT INTO schedules (id, worker, cron, every, timezone, description, status, created_by, created_at, updated_at)
      VALUES (${e.id}, ${e.worker}, ${e.cron}, ${e.every}, ${e.timezone}, ${e.description}, ${e.status}, ${json(e.created_by)}, ${e.created_at}, ${e.updated_at})`;
    return { ok: true };
  }

  async update(id: string, status: ScheduleEntry["status"], at: number): Promise<void> {
    this.sql.run`UPDATE schedules SET status = ${status}, updated_at = ${at} WHERE id = ${id}`;
  }

  async remove(id: string): Promise<void> {
    this.sql.run`DELETE FROM schedules WHERE id = ${id}`;
  }

  async list(after: string | undefined, limit: number): Promise<{ schedules: ScheduleEntry[]; next: string | null }> {
    const rows = this.sql.all<EntryRow>`SELECT * FROM schedules WHERE id > ${after ?? ""} ORDER BY id LIMIT ${limit + 1}`;
    const schedules = rows.slice(0, limit).map((r) => ({ ...r, created_by: parse<ScheduleEntry["created_by"]>(r.created_by) }));
    return { schedules, next: rows.length > limit ? schedules.at(-1)!.id : null };
  }
}
