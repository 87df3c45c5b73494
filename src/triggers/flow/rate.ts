/**
 * A key's rate (`rate: 10/min`) as GCRA: one number, the theoretical arrival time
 * `tat`, is all the state. A delivery may pass at `now` when `tat` is at most one period
 * minus one interval ahead (so a burst of `limit` passes at once, then one per interval);
 * passing moves `tat` one interval on.
 */

export interface Rate {
  limit: number;
  periodMs: number;
}

/** Whether one more may pass at `now` (and the `tat` after it), or the earliest time it may. */
export function rateCheck(rate: Rate, tat: number | undefined, now: number): { ok: true; tat: number } | { ok: false; at: number } {
  const interval = rate.periodMs / rate.limit;
  const base = Math.max(tat ?? now, now);
  const allowedAt = base - (rate.periodMs - interval);
  return now >= allowedAt ? { ok: true, tat: base + interval } : { ok: false, at: Math.ceil(allowedAt) };
}
