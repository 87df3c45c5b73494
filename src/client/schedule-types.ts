/** `/schedules`: runtime schedules (wire shapes). */

import type { ApprovalMode } from "./types";

export interface ScheduleParams {
  /** Yours (1–64 of A-Z a-z 0-9 _ -): the same id and spec again is the same schedule. Default: a new one. */
  id?: string;
  /** The worker or code function each fire starts. */
  worker: string;
  /** Default `{}`; `{{scheduled_time}}` in a string becomes the fire's time (ISO 8601, UTC). At most 64 KiB as JSON. */
  input?: unknown;
  /** Five fields (`0 9 * * MON`; 1 = Sunday, as Cloudflare's crons); or `every`. */
  cron?: string;
  /** `30m`, `1h`, `7d` from the schedule's creation; at least a minute. Or `cron`. */
  every?: string;
  /** IANA time zone `cron` is read in; default UTC. */
  timezone?: string;
  attributes?: Record<string, string | number | boolean>;
  /** At most 200 characters. */
  description?: string;
  approvalMode?: ApprovalMode;
  /** Created paused: no fire until resumed. */
  paused?: boolean;
}

export type ScheduleOrigin = { kind: "api" } | { kind: "run"; run: string };

/** `GET /schedules/:id` (and what create, pause and resume answer). */
export interface Schedule {
  id: string;
  spec: {
    worker: string;
    input: unknown;
    cron?: string;
    every?: string;
    timezone?: string;
    attributes: Record<string, string>;
    description?: string;
    approval_mode: ApprovalMode;
  };
  status: "active" | "paused";
  /** Null while paused. */
  next_fire_at: number | null;
  fires: number;
  last_fired_at: number | null;
  last_run_id: string | null;
  /** Why its last fire started no run; null after one that did. */
  last_error: string | null;
  created_by: ScheduleOrigin;
  created_at: number;
  updated_at: number;
}

/** One entry of `GET /schedules`. */
export interface ScheduleEntry {
  id: string;
  worker: string;
  cron: string | null;
  every: string | null;
  timezone: string | null;
  description: string | null;
  status: "active" | "paused";
  created_by: ScheduleOrigin;
  created_at: number;
  updated_at: number;
}

export interface SchedulePage {
  schedules: ScheduleEntry[];
  next_cursor: string | null;
}
