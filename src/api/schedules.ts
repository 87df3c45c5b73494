import * as z from "zod";
import { attributesSchema, MAX_ATTRIBUTES, UNSHOWABLE } from "./attributes";
import { WORKER_NAME } from "./bounds";
import { approvalMode, attributes, json } from "./common";

/** `/schedules`: runtime schedules (src/schedules/ keeps and fires them; src/schedules/spec.ts checks what JSON Schema cannot say). */

/** A schedule's id: yours (`POST /schedules {id}`), `s-<uuid>`, or `run-<hash>` for one a run created. */
export const SCHEDULE_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const SCHEDULE_STATUSES = ["active", "paused"] as const;

/** A schedule's fields, as `POST /schedules` and `ctx.schedule` take them: exactly one of `cron` and `every`. */
export const scheduleFields = {
  worker: z.string().regex(WORKER_NAME, "a worker name is 1-64 characters of a-z A-Z 0-9 _ -"),
  /** Default `{}`; `{{scheduled_time}}` in a string becomes the fire's time. At most 64 KiB as JSON. */
  input: json.default({}),
  /** Five fields (`0 9 * * MON`; 1 = Sunday, as Cloudflare's crons). */
  cron: z.string().max(100).optional(),
  /** `30m`, `1h`, `7d` from the schedule's creation; at least a minute. */
  every: z.string().max(12).optional(),
  /** The IANA time zone `cron` is read in; default UTC. */
  timezone: z.string().max(64).optional(),
  attributes: attributesSchema(MAX_ATTRIBUTES, "attributes").default({}),
  description: z
    .string()
    .max(200)
    .refine((d) => !UNSHOWABLE.test(d), "a description may not hold control characters, line separators or bidirectional overrides")
    .optional(),
  approval_mode: approvalMode.default("ask"),
};

/** `POST /schedules`: the fields, an optional id of yours (the same id and spec again: the same schedule), and whether it starts paused. */
export const createScheduleBody = z.strictObject({
  ...scheduleFields,
  id: z.string().regex(SCHEDULE_ID, "a schedule id is 1-64 characters of A-Z a-z 0-9 _ -").optional(),
  paused: z.boolean().default(false),
});

/** `GET /schedules` paging: after a schedule id, at most 200 a page (ids in order). */
export const listSchedulesQuery = z.strictObject({
  cursor: z.string().regex(SCHEDULE_ID, "not a cursor from a previous page's next_cursor").optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** Who made a schedule: the API, or a run's code (`ctx.schedule`). */
const origin = z.union([z.object({ kind: z.literal("api") }), z.object({ kind: z.literal("run"), run: z.string() })]);
const status = z.enum(SCHEDULE_STATUSES);

/** A schedule as the listing keeps it (`GET /schedules`): its spec, no fire times (those are the schedule's own). */
export const scheduleEntry = z.object({
  id: z.string(),
  worker: z.string(),
  cron: z.string().nullable(),
  every: z.string().nullable(),
  timezone: z.string().nullable(),
  description: z.string().nullable(),
  status,
  created_by: origin,
  created_at: z.number(),
  updated_at: z.number(),
});

/** `GET /schedules`. */
export const schedulePage = z.object({ schedules: z.array(scheduleEntry), next_cursor: z.string().nullable() });

/** `GET /schedules/:id` (and what creating, pausing and resuming answer): the whole spec and its fires. */
export const scheduleView = z.object({
  id: z.string(),
  spec: z.object({
    worker: z.string(),
    input: json,
    cron: z.string().optional(),
    every: z.string().optional(),
    timezone: z.string().optional(),
    attributes,
    description: z.string().optional(),
    approval_mode: approvalMode,
  }),
  status,
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

/** `POST /schedules/:id/trigger`: the run it started now. */
export const triggeredRun = z.object({ id: z.string(), run_id: z.string() });
/** `DELETE /schedules/:id`. */
export const deletedSchedule = z.object({ id: z.string(), deleted: z.literal(true) });
