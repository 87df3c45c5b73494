import { type Cron, cronMatchesDate } from "../triggers/cron";
import { type ZoneDay, zoneClock } from "./zone-clock";

/**
 * How far ahead a fire is looked for. Dates, weekdays and leap years repeat every 400 years,
 * so an expression with no fire in them never fires (`0 0 31 2 *`); a rare one is still found
 * (`0 0 29 2 *` after 2096: 2104). The search looks at each day once, and at the times of a
 * matching day only: a never-firing expression costs at most 400 × 12 × 31 date checks.
 */
const HORIZON_MONTHS = 400 * 12 + 1;

/**
 * The first instant after `after` (ms) at which `cron` fires by the clock of `zone` (an IANA
 * zone the runtime knows), or null if it never does. Where the clock is set back, a time it
 * shows twice fires twice, unless the expression is one fixed time (`30 2 * * *`), which
 * fires at the first; a time the clock skips does not fire, unless the expression is one
 * fixed time, which fires right after the skip (as Vixie cron, and croner before this did).
 */
export function nextCron(cron: Cron, zone: string, after: number): number | null {
  const clock = zoneClock(zone);
  const start = clock.localDate(after);
  // From the day before: a clock set back across midnight shows that date again.
  let { year, month } = start;
  let day = start.day - 1;
  if (day < 1) {
    [year, month] = month === 1 ? [year - 1, 12] : [year, month - 1];
    day = daysIn(year, month);
  }
  for (let i = 0; i < HORIZON_MONTHS; i++) {
    if (cron.months.has(month)) {
      const dim = daysIn(year, month);
      for (; day <= dim; day++) {
        if (!cronMatchesDate(cron, year, month, day, dim)) continue;
        const fire = firstFire(cron, clock.day(year, month, day), after);
        if (fire !== null) return fire;
      }
    }
    day = 1;
    [year, month] = month === 12 ? [year + 1, 1] : [year, month + 1];
  }
  return null;
}

/** The earliest fire after `after` on one day whose date matches, or null. */
function firstFire(cron: Cron, day: ZoneDay, after: number): number | null {
  let best: number | null = null;
  for (const hour of cron.hours) {
    for (const minute of cron.minutes) {
      const wall = day.midnight + hour * 3_600_000 + minute * 60_000;
      const instants = day.instants(wall);
      const fires = instants.length === 0 ? (cron.fixedTime ? [day.skippedTo(wall)] : []) : cron.fixedTime ? instants.slice(0, 1) : instants;
      for (const t of fires) if (t > after && (best === null || t < best)) best = t;
      // Without a clock change the day's times come in order: the first after `after` is the one.
      if (best !== null && !day.shifts) return best;
    }
  }
  return best;
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
