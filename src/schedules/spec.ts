/**
 * A runtime schedule (`POST /schedules`, `ctx.schedule`): which worker it starts, with what input and
 * attributes, on a cron expression (in a time zone) or every so often. Each field is bounded by the
 * API's schema (src/api/schedules.ts); here they are checked together, once, for every way in. Cron
 * expressions are read as triggers.yaml's are (src/triggers/cron.ts: five fields, 1 = Sunday; names
 * such as MON read the same either way).
 */

import * as z from "zod";
import { SCHEDULE_ID, scheduleFields } from "../api/schedules";
import { durationMs, shownDuration } from "../engine/waits/bounds";
import { parseCron } from "../triggers/cron";
import { nextCron } from "./next-cron";

export { SCHEDULE_ID };
/** At most this many schedules per deployment (counted by the listing, src/schedules/api.ts). */
export const MAX_SCHEDULES = 1000;
/** A schedule fires at most once a minute: `every` is at least this (a cron expression has minutes as its finest field). */
export const MIN_INTERVAL_MS = 60_000;
export const MAX_INTERVAL_MS = 366 * 86_400_000;
/** Its input as stored JSON (each fire's run gets it, with `{{scheduled_time}}` filled in). */
export const MAX_SCHEDULE_INPUT_BYTES = 64 * 1024;

/** Whether `zone` is an IANA time zone this runtime knows (`Europe/Berlin`, `UTC`). */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

type Fields = z.output<z.ZodObject<typeof scheduleFields>>;

/** What the fields must say together: input bounded, exactly one of cron and every, each valid, a cron that fires. */
export function checkSchedule(s: Fields, ctx: z.RefinementCtx): void {
  const bytes = new TextEncoder().encode(JSON.stringify(s.input)).length;
  if (bytes > MAX_SCHEDULE_INPUT_BYTES)
    ctx.addIssue({ code: "custom", path: ["input"], message: `is ${bytes} bytes as JSON; a schedule's input is at most ${MAX_SCHEDULE_INPUT_BYTES}` });
  if ((s.cron === undefined) === (s.every === undefined)) {
    ctx.addIssue({ code: "custom", path: ["cron"], message: 'give exactly one of cron ("0 9 * * MON") or every ("1h")' });
    return;
  }
  if (s.timezone !== undefined && !knownZone(s.timezone))
    ctx.addIssue({ code: "custom", path: ["timezone"], message: "is not an IANA time zone such as Europe/Berlin or UTC" });
  if (s.every !== undefined) {
    if (s.timezone !== undefined) ctx.addIssue({ code: "custom", path: ["timezone"], message: "only a cron expression is read in a time zone" });
    const ms = everyMs(s.every);
    if (typeof ms === "string") ctx.addIssue({ code: "custom", path: ["every"], message: ms });
    return;
  }
  const cron = parseCron(s.cron!);
  if (typeof cron === "string") ctx.addIssue({ code: "custom", path: ["cron"], message: cron });
  else if (s.timezone === undefined || knownZone(s.timezone)) {
    if (nextCron(cron, s.timezone ?? "UTC", Date.now()) === null) ctx.addIssue({ code: "custom", path: ["cron"], message: "never fires (no such date)" });
  }
}

/** A schedule as `ctx.schedule` gives it, and as a schedule's object keeps it. */
export const scheduleSpec = z.strictObject(scheduleFields).superRefine(checkSchedule);
export type ScheduleSpec = z.output<typeof scheduleSpec>;

/** `every` in ms, or why it is refused. */
function everyMs(every: string): number | string {
  let ms: number;
  try {
    ms = durationMs(every, "every");
  } catch (err) {
    return (err as Error).message.replace(/^every: /, "");
  }
  if (ms < MIN_INTERVAL_MS) return `${every} is more often than a schedule may fire (at most once a minute)`;
  if (ms > MAX_INTERVAL_MS) return `${every} is longer than ${shownDuration(MAX_INTERVAL_MS)}`;
  return ms;
}

/**
 * A schedule's first fire after `after` (ms): the cron expression's next instant, or for `every`
 * the next of anchor + k × every (its creation is the anchor, so fires keep their rhythm however
 * late one came). Null: it never fires again.
 */
export function nextFire(spec: Pick<ScheduleSpec, "cron" | "every" | "timezone">, anchor: number, after: number): number | null {
  if (spec.every !== undefined) {
    const every = everyMs(spec.every) as number;
    return anchor + (Math.floor(Math.max(0, after - anchor) / every) + 1) * every;
  }
  const cron = parseCron(spec.cron!);
  return typeof cron === "string" ? null : nextCron(cron, spec.timezone ?? "UTC", after);
}
