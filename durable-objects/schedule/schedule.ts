import { DurableObject } from "cloudflare:workers";
import { messageOf } from "../../src/engine";
import { scheduleIndex, type ScheduleAnswer, type ScheduleEntry, type ScheduleOrigin, type ScheduleRpc, type ScheduleView } from "../../src/schedules/api";
import { nextFire, type ScheduleSpec } from "../../src/schedules/spec";
import { json, parse, Sql, type JsonText } from "../sql";
import { fireRunId, startFire } from "./fire";

/** A fire whose start got no answer is tried again this much later, this many times in all, then skipped (its error kept). */
const RETRY_MS = 60_000;
const MAX_TRIES = 5;

const SCHEMA = `CREATE TABLE IF NOT EXISTS schedule (
  id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL, next_fire_at INTEGER, anchor INTEGER NOT NULL,
  created_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, listed INTEGER NOT NULL,
  fires INTEGER NOT NULL DEFAULT 0, last_fired_at INTEGER, last_run_id TEXT, last_error TEXT, tries INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID`;

/** The one row: the spec as given, where it stands, and its last fire. `status` `deleting`: its removal began (then it is gone). */
interface ScheduleRow {
  id: string;
  spec: JsonText<ScheduleSpec>;
  status: "active" | "paused" | "deleting";
  next_fire_at: number | null;
  anchor: number;
  created_by: JsonText<ScheduleOrigin>;
  created_at: number;
  updated_at: number;
  /** 1 once the listing has it (a schedule is stored first, then listed: one cut off between is listed at its first fire). */
  listed: number;
  fires: number;
  last_fired_at: number | null;
  last_run_id: string | null;
  last_error: string | null;
  tries: number;
}

/**
 * One runtime schedule (`/schedules`, `ctx.schedule`): its spec in SQLite, its alarm at its next
 * fire. A fire starts one run (fire.ts: its id from the schedule and the instant), then arms the
 * next from the later of that instant and now: fires missed while nothing ran (a long outage) are
 * not made up, one is. Survives deploys and restarts: the row and the alarm are the schedule.
 * The listing (ScheduleIndexDO) hears of it when it is created, paused, resumed or deleted only.
 */
export class ScheduleDO extends DurableObject<Env> implements ScheduleRpc {
  protected readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.sql.script(SCHEMA);
  }

  async create(req: {
    id: string;
    spec: ScheduleSpec;
    paused: boolean;
    created_by: ScheduleOrigin;
  }): Promise<ScheduleAnswer<{ created: boolean; view: ScheduleView }>> {
    const held = this.row();
    if (held?.status === "deleting") return { ok: false, status: 409, error: `schedule ${req.id} is being deleted; create it again once it is gone` };
    if (held && held.spec !== json(req.spec))
      return { ok: false, status: 409, error: `schedule ${req.id} exists with another spec: delete it first, or use another id` };
    if (!held) {
      const now = this.now();
      const next = req.paused ? null : nextFire(req.spec, now, now);
      this.sql.run`INSERT INTO schedule (id, spec, status, next_fire_at, anchor, created_by, created_at, updated_at, listed)
        VALUES (${req.id}, ${json(req.spec)}, ${req.paused ? "paused" : "active"}, ${next}, ${now}, ${json(req.created_by)}, ${now}, ${now}, 0)`;
      if (next !== null) await this.ctx.storage.setAlarm(next);
    }
    // Listed after it is stored (the listing holds the bound): a refusal takes it back; a repeat (held, not listed) lists it now.
    const listed = await this.list();
    if (!listed.ok) {
      await this.forget();
      return { ok: false, status: 409, error: listed.error };
    }
    return { ok: true, created: !held, view: this.shown()! };
  }

  async view(): Promise<ScheduleView | null> {
    return this.shown();
  }

  private shown(): ScheduleView | null {
    const r = this.row();
    if (!r || r.status === "deleting") return null;
    return {
      id: r.id,
      spec: parse(r.spec),
      status: r.status,
      next_fire_at: r.status === "active" ? r.next_fire_at : null,
      fires: r.fires,
      last_fired_at: r.last_fired_at,
      last_run_id: r.last_run_id,
      last_error: r.last_error,
      created_by: parse(r.created_by),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  async pause(): Promise<ScheduleAnswer<{ view: ScheduleView }>> {
    return this.setStatus("paused");
  }

  async resume(): Promise<ScheduleAnswer<{ view: ScheduleView }>> {
    return this.setStatus("active");
  }

  async trigger(): Promise<ScheduleAnswer<{ run_id: string }>> {
    const r = this.row();
    if (!r || r.status === "deleting") return { ok: false, status: 404, error: "unknown schedule" };
    const runId = fireRunId(r.id, `now_${crypto.randomUUID()}`);
    const started = await startFire(this.env, { id: r.id, spec: parse(r.spec) }, this.now(), runId);
    return started.ok ? { ok: true, run_id: runId } : { ok: false, status: 409, error: started.error };
  }

  async remove(): Promise<ScheduleAnswer<Record<never, never>>> {
    const r = this.row();
    if (!r) return { ok: false, status: 404, error: "unknown schedule" };
    // Marked first (no more fires), then unlisted, then gone: a removal cut off anywhere is finished by the next.
    this.sql.run`UPDATE schedule SET status = 'deleting'`;
    await this.ctx.storage.deleteAlarm();
    await scheduleIndex(this.env).remove(r.id);
    await this.forget();
    return { ok: true };
  }

  /** A fire due (or early: then only re-armed): its run, then the next fire. */
  override async alarm(): Promise<void> {
    const r = this.row();
    if (r?.status !== "active" || r.next_fire_at === null) return;
    const now = this.now();
    if (now < r.next_fire_at) return this.ctx.storage.setAlarm(r.next_fire_at);
    if (!r.listed) {
      const listed = await this.list();
      if (!listed.ok) return this.forget(); // never listed, and no room: as if its creation had been refused
    }
    const due = r.next_fire_at;
    const runId = fireRunId(r.id, due);
    let outcome: { ok: true } | { ok: false; error: string; retry: boolean };
    try {
      const started = await startFire(this.env, { id: r.id, spec: parse(r.spec) }, due, runId);
      outcome = started.ok ? { ok: true } : { ok: false, error: started.error, retry: false };
    } catch (err) {
      outcome = { ok: false, error: `the run could not be started: ${messageOf(err)}`.slice(0, 500), retry: true };
    }
    // Read again after the await: a pause or a removal that came meanwhile stands.
    const after = this.row();
    if (!after || after.status === "deleting") return;
    if (!outcome.ok && outcome.retry && after.tries + 1 < MAX_TRIES) {
      this.sql.run`UPDATE schedule SET tries = tries + 1, last_error = ${outcome.error}`;
      return this.ctx.storage.setAlarm(now + RETRY_MS);
    }
    const next = nextFire(parse(r.spec), r.anchor, Math.max(due, this.now()));
    this.sql.run`UPDATE schedule SET next_fire_at = ${next}, tries = 0, fires = fires + ${outcome.ok ? 1 : 0},
      last_fired_at = ${due}, last_run_id = ${outcome.ok ? runId : after.last_run_id}, last_error = ${outcome.ok ? null : outcome.error}`;
    if (after.status === "active" && next !== null) await this.ctx.storage.setAlarm(next);
  }

  /** Paused: no alarm, no fire; resumed: the next fire from now. The listing hears of it. */
  private async setStatus(status: "active" | "paused"): Promise<ScheduleAnswer<{ view: ScheduleView }>> {
    const r = this.row();
    if (!r || r.status === "deleting") return { ok: false, status: 404, error: "unknown schedule" };
    if (r.status !== status) {
      const now = this.now();
      const next = status === "active" ? nextFire(parse(r.spec), r.anchor, now) : r.next_fire_at;
      this.sql.run`UPDATE schedule SET status = ${status}, next_fire_at = ${next}, updated_at = ${now}`;
      if (status === "paused" || next === null) await this.ctx.storage.deleteAlarm();
      else await this.ctx.storage.setAlarm(next);
      await scheduleIndex(this.env).update(r.id, status, now);
    }
    return { ok: true, view: this.shown()! };
  }

  /** Lists it (idempotent), marking it listed; refused past the deployment's bound. */
  private async list(): Promise<{ ok: true } | { ok: false; error: string }> {
    const r = this.row()!;
    if (r.listed) return { ok: true };
    const spec = parse<ScheduleSpec>(r.spec);
    const entry: ScheduleEntry = {
      id: r.id,
      worker: spec.worker,
      cron: spec.cron ?? null,
      every: spec.every ?? null,
      timezone: spec.timezone ?? null,
      description: spec.description ?? null,
      status: r.status === "paused" ? "paused" : "active",
      created_by: parse(r.created_by),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
    const added = await scheduleIndex(this.env).add(entry);
    if (added.ok) this.sql.run`UPDATE schedule SET listed = 1`;
    return added;
  }

  /** Nothing of it is kept (this instance answers as for an id never used). */
  private async forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.sql.script(SCHEMA);
  }

  private row(): ScheduleRow | undefined {
    return this.sql.one<ScheduleRow>`SELECT * FROM schedule`;
  }

  /** The schedule's clock: fire times are read on it (the test pool's subclass moves it: tests/support/test-schedule.ts). */
  protected now(): number {
    return Date.now();
  }
}
