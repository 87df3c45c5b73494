/**
 * A schedule a run's code creates (`ctx.schedule`): it starts a run of `worker` with `input` and
 * `attributes` on a cron expression or every so often, until it is paused or deleted (by the API).
 * The host checks every field (src/schedules/spec.ts: the same rules as `POST /schedules`).
 */
export interface ScheduleSpec {
  /** The worker or code function each fire starts. */
  worker: string;
  /** Its input (default `{}`); `{{scheduled_time}}` in a string becomes the fire's time (ISO 8601, UTC). */
  input?: unknown;
  /** Five fields, minute hour day-of-month month day-of-week (`0 9 * * MON`); or `every`. */
  cron?: string;
  /** A fixed interval from the schedule's creation (`1h`, `30m`, `7d`; at least a minute); or `cron`. */
  every?: string;
  /** The IANA time zone `cron` is read in (`Europe/Berlin`); default UTC. */
  timezone?: string;
  /** The attributes of each run it starts. */
  attributes?: Record<string, string | number | boolean>;
  /** What it is for, as people read it in listings (at most 200 characters). */
  description?: string;
  approval_mode?: "ask" | "approve_all" | "reject_all";
}

/** A schedule as `ctx.schedule` answers: its id (for `/schedules/:id`), and its first fire (ms since the epoch). */
export interface ScheduledRef {
  id: string;
  next_fire_at: number | null;
}

/** What the host answers a creation: the schedule (made now, or before under the same id), or why not. */
export type ScheduleCreated = ({ ok: true } & ScheduledRef) | { ok: false; error: string };

/**
 * Where a run's schedules are kept (the host's schedule objects). `create` is idempotent per `id`:
 * the engine derives it from the run and the call's journal key, so a replay finds the schedule
 * it made, never a second one. A refusal (a bad spec, too many schedules) is a value; a failure to
 * reach the store throws (the run is retried later).
 */
export interface Schedules {
  create(id: string, spec: unknown): Promise<ScheduleCreated>;
}
