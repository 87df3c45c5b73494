/**
 * Runtime schedules: what `/schedules` takes and gives (zod schemas, once per route, for the
 * OpenAPI document to come) and the RPC of their objects: one ScheduleDO per schedule (its alarm at
 * the next fire: durable-objects/schedule/), and the listing (ScheduleIndexDO), which is written
 * when a schedule is created, paused, resumed or deleted, and never when one fires.
 */

import * as z from "zod";
import { checkSchedule, SCHEDULE_ID, scheduleFields, type ScheduleSpec } from "./spec";

/** `POST /schedules`: the spec, an optional id of yours (the same id and spec again: the same schedule), and whether it starts paused. */
export const createScheduleBody = z
  .strictObject({
    ...scheduleFields,
    id: z.string().regex(SCHEDULE_ID, "a schedule id is 1-64 characters of A-Z a-z 0-9 _ -").optional(),
    paused: z.boolean().default(false),
  })
  .superRefine(checkSchedule);

/** `GET /schedules` paging: after a schedule id, at most 200 a page (ids in order). */
export const listSchedulesQuery = z.strictObject({
  cursor: z.string().regex(SCHEDULE_ID, "not a cursor from a previous page's next_cursor").optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** Who made a schedule: the API, or a run's code (`ctx.schedule`). */
export type ScheduleOrigin = { kind: "api" } | { kind: "run"; run: string };

export const SCHEDULE_STATUSES = ["active", "paused"] as const;

const origin = z.union([z.object({ kind: z.literal("api") }), z.object({ kind: z.literal("run"), run: z.string() })]);

/** A schedule as the listing keeps it (`GET /schedules`): its spec, no fire times (those are the schedule's own). */
export const scheduleEntry = z.object({
  id: z.string(),
  worker: z.string(),
  cron: z.string().nullable(),
  every: z.string().nullable(),
  timezone: z.string().nullable(),
  description: z.string().nullable(),
  status: z.enum(SCHEDULE_STATUSES),
  created_by: origin,
  created_at: z.number(),
  updated_at: z.number(),
});
export type ScheduleEntry = z.output<typeof scheduleEntry>;

/** `GET /schedules`. */
export const schedulePage = z.object({ schedules: z.array(scheduleEntry), next_cursor: z.string().nullable() });

/** `GET /schedules/:id` (and what creating, pausing and resuming answer): the whole spec and its fires. */
export const scheduleView = z.object({
  id: z.string(),
  spec: z.record(z.string(), z.unknown()),
  status: z.enum(SCHEDULE_STATUSES),
  /** Its next fire (ms since the epoch); null while paused, or if it never fires again. */
  next_fire_at: z.number().nullable(),
  fires: z.number(),
  last_fired_at: z.number().nullable(),
  last_run_id: z.string().nullable(),
  /** Why its last fire started no run (its worker was removed by a deploy, say); null after one that did. */
  last_error: z.string().nullable(),
  created_by: origin,
  created_at: z.number(),
  updated_at: z.number(),
});
export type ScheduleView = z.output<typeof scheduleView>;

/** `POST /schedules/:id/trigger`: the run it started now. */
export const triggeredRun = z.object({ id: z.string(), run_id: z.string() });

/** RPC answers that can fail carry an HTTP-like status. */
export type ScheduleAnswer<T> = ({ ok: true } & T) | { ok: false; status: 404 | 409 | 400; error: string };

/** What the app asks of one schedule's object (durable-objects/schedule/schedule.ts). */
export interface ScheduleRpc {
  /** Makes the schedule (listed first; refused past MAX_SCHEDULES); the same id and spec again finds it (`created: false`), another spec is a 409. */
  create(req: {
    id: string;
    spec: ScheduleSpec;
    paused: boolean;
    created_by: ScheduleOrigin;
  }): Promise<ScheduleAnswer<{ created: boolean; view: ScheduleView }>>;
  view(): Promise<ScheduleView | null>;
  pause(): Promise<ScheduleAnswer<{ view: ScheduleView }>>;
  resume(): Promise<ScheduleAnswer<{ view: ScheduleView }>>;
  /** Starts a run now, paused or not; its next fire stays as it was. */
  trigger(): Promise<ScheduleAnswer<{ run_id: string }>>;
  /** Deletes it (and its entry in the listing); again for one gone: a 404. */
  remove(): Promise<ScheduleAnswer<Record<never, never>>>;
}

/** What a schedule asks of the listing (durable-objects/schedule/listing.ts). */
export interface ScheduleIndexRpc {
  /** Lists it (idempotent by id), unless the deployment has MAX_SCHEDULES already. */
  add(entry: ScheduleEntry): Promise<{ ok: true } | { ok: false; error: string }>;
  /** Its status changed (paused, resumed). */
  update(id: string, status: ScheduleEntry["status"], at: number): Promise<void>;
  remove(id: string): Promise<void>;
  list(after: string | undefined, limit: number): Promise<{ schedules: ScheduleEntry[]; next: string | null }>;
}

export const scheduleStub = (env: Env, id: string) => env.SCHEDULES.getByName(id) as unknown as ScheduleRpc;
/** The listing: one object, written only when a schedule is created, paused, resumed or deleted (never on a fire). */
export const scheduleIndex = (env: Env) => env.SCHEDULE_INDEX.getByName("schedules") as unknown as ScheduleIndexRpc;
