/**
 * Runtime schedules: what `/schedules` takes and gives is the API's (src/api/schedules.ts); here,
 * the RPC of their objects: one ScheduleDO per schedule (its alarm at
 * the next fire: durable-objects/schedule/), and the listing (ScheduleIndexDO), which is written
 * when a schedule is created, paused, resumed or deleted, and never when one fires.
 */

import type * as z from "zod";
import { createScheduleBody, type scheduleEntry, type scheduleView } from "../api/schedules";
import { checkSchedule, type ScheduleSpec } from "./spec";

/** `POST /schedules` as the route checks it: the API's body, its fields checked together (a cron that fires, one of cron and every). */
export const scheduleBody = createScheduleBody.superRefine(checkSchedule);

/** Who made a schedule: the API, or a run's code (`ctx.schedule`). */
export type ScheduleOrigin = { kind: "api" } | { kind: "run"; run: string };
export type ScheduleEntry = z.output<typeof scheduleEntry>;
export type ScheduleView = z.output<typeof scheduleView>;

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
