/** `/schedules`: runtime schedules (the server's schemas: src/api/schedules.ts). */

import type * as z from "zod";
import type { createScheduleBody, scheduleEntry, schedulePage, scheduleView } from "../api/schedules";
import type { ApprovalMode } from "./types";

type ScheduleBody = z.input<typeof createScheduleBody>;

/**
 * `id`: yours (1–64 of A-Z a-z 0-9 _ -), the same id and spec again is the same schedule (default: a new one).
 * `input`: default `{}`; `{{scheduled_time}}` in a string becomes the fire's time (at most 64 KiB as JSON).
 * Exactly one of `cron` (five fields, `0 9 * * MON`; 1 = Sunday, read in `timezone`, default UTC) and
 * `every` (`30m`, `1h`, `7d` from the schedule's creation; at least a minute). `paused`: no fire until resumed.
 */
export type ScheduleParams = Omit<ScheduleBody, "approval_mode"> & { approvalMode?: ApprovalMode };

export type Schedule = z.output<typeof scheduleView>;
export type ScheduleOrigin = Schedule["created_by"];
/** One entry of `GET /schedules`. */
export type ScheduleEntry = z.output<typeof scheduleEntry>;
export type SchedulePage = z.output<typeof schedulePage>;
