import type * as z from "zod";
import type { deletedSchedule, triggeredRun } from "../api/schedules";
import type { Schedule, SchedulePage, ScheduleParams } from "./schedule-types";
import type { RequestOptions, Transport } from "./transport";

/** `/schedules`: runtime schedules, each starting runs of a worker on a cron expression or every so often. */
export class Schedules {
  constructor(private readonly transport: Transport) {}

  /**
   * `POST /schedules`. Retried only with your own `id` (a repeat with it is the same schedule);
   * without one, a repeat after a lost answer could make a second schedule, so it is sent once.
   */
  create(params: ScheduleParams, options?: RequestOptions): Promise<Schedule> {
    const { approvalMode, ...rest } = params;
    const body = { ...rest, ...(approvalMode ? { approval_mode: approvalMode } : {}) };
    return this.transport.json({ method: "POST", path: "/schedules", body }, { ...options, maxRetries: options?.maxRetries ?? (params.id ? undefined : 0) });
  }

  /** One page of `GET /schedules` (by id; pass `next_cursor` as `cursor` for the next). */
  page(query: { cursor?: string; limit?: number } = {}, options?: RequestOptions): Promise<SchedulePage> {
    return this.transport.json({ method: "GET", path: "/schedules", query }, options);
  }

  /** Every page of `GET /schedules`. */
  async *list(query: { limit?: number } = {}, options?: RequestOptions): AsyncGenerator<SchedulePage> {
    let cursor: string | undefined;
    do {
      const page = await this.page({ ...query, cursor }, options);
      yield page;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  get(id: string, options?: RequestOptions): Promise<Schedule> {
    return this.transport.json({ method: "GET", path: schedulePath(id) }, options);
  }

  pause(id: string, options?: RequestOptions): Promise<Schedule> {
    return this.transport.json({ method: "POST", path: `${schedulePath(id)}/pause` }, options);
  }

  resume(id: string, options?: RequestOptions): Promise<Schedule> {
    return this.transport.json({ method: "POST", path: `${schedulePath(id)}/resume` }, options);
  }

  /** `POST /schedules/:id/trigger`: a run now, paused or not. Never retried: each is a new run. */
  trigger(id: string, options?: RequestOptions): Promise<z.output<typeof triggeredRun>> {
    return this.transport.json({ method: "POST", path: `${schedulePath(id)}/trigger` }, { ...options, maxRetries: 0 });
  }

  /** `DELETE /schedules/:id`; one gone → NotFoundError. */
  delete(id: string, options?: RequestOptions): Promise<z.output<typeof deletedSchedule>> {
    return this.transport.json({ method: "DELETE", path: schedulePath(id) }, options);
  }
}

const schedulePath = (id: string) => `/schedules/${encodeURIComponent(id)}`;
