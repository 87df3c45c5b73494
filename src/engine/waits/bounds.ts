import { ToolError } from "../errors";

/**
 * What a wait may be given, from code, a model or a caller of the API: every input
 * bounded, and checked without a regex that could backtrack (the patterns below are
 * flat). None of it ever shapes a journal key (the key is `<call>/wait:<n>`).
 */

/** An event's name: the `:name` of `POST /runs/:id/events/:name`, a signal trigger's `event`. */
export const EVENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** A correlation key is data (a commit sha, an order id), at most this many characters. */
export const MAX_CORRELATION_CHARS = 256;
/** A wait's reason, as shown on the run page, cut to this many characters. */
export const MAX_REASON_CHARS = 300;
/** The longest wait code may ask for (ctx.sleep, ctx.waitForEvent); the `wait` kind's `max` is usually far less. */
export const MAX_WAIT_MS = 365 * 86_400_000;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})(s|m|h|d)$/;

/**
 * A duration in ms: a number of ms, or text such as `90s`, `20m`, `2h`, `7d`. `what`
 * names the argument in the error a caller (or a model) reads.
 */
export function durationMs(value: number | string, what: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) throw new ToolError(`${what}: ${value} is not a duration in milliseconds (a number ≥ 0)`);
    return Math.floor(value);
  }
  const m = typeof value === "string" && value.length <= 12 ? DURATION.exec(value.trim()) : null;
  if (!m) throw new ToolError(`${what}: ${JSON.stringify(String(value).slice(0, 40))} is not a duration such as 90s, 20m, 2h or 7d`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** `ms` as people write it: the largest whole unit (`2h`, `90s`, `36h`). */
export function shownDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", UNIT_MS.d],
    ["h", UNIT_MS.h],
    ["m", UNIT_MS.m],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** A wait of `ms` checked against `max` (the kind's `max`, or MAX_WAIT_MS). */
export function boundedWait(ms: number, max: number, what: string): number {
  if (ms > max) throw new ToolError(`${what}: ${shownDuration(ms)} is longer than the longest wait allowed here (${shownDuration(max)})`);
  return ms;
}

/** An event name a caller gave, checked. */
export function eventName(name: unknown, what: string): string {
  if (typeof name !== "string" || !EVENT_NAME.test(name)) throw new ToolError(`${what}: an event name is 1-64 characters of A-Z a-z 0-9 _ . -`);
  return name;
}

/** A correlation key a caller gave, checked (any text, bounded). */
export function correlationKey(key: unknown, what: string): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_CORRELATION_CHARS)
    throw new ToolError(`${what}: a correlation key is a string of 1-${MAX_CORRELATION_CHARS} characters`);
  return key;
}
