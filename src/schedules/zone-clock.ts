/**
 * A time zone's clock, from the runtime's own zone data (Intl.DateTimeFormat): the local date
 * of an instant, and the instants at which the clock shows a given local time of a day —
 * none where it skips ahead, two where it is set back. Local times are written as if they
 * were UTC: `Date.UTC(year, month - 1, day, hour, minute)`.
 */

const HOUR = 3_600_000;

/** One local calendar day of a zone's clock. */
export interface ZoneDay {
  /** Its 00:00, as if UTC. */
  midnight: number;
  /** Whether the clock changes on or near it (then its times need not come in the order of its instants). */
  shifts: boolean;
  /** The instants at which the clock shows `wall`, earliest first. */
  instants(wall: number): number[];
  /** Where the clock skipped `wall`: the first instant after the skip. */
  skippedTo(wall: number): number;
}

export interface ZoneClock {
  localDate(at: number): { year: number; month: number; day: number };
  day(year: number, month: number, day: number): ZoneDay;
}

/** `zone` must be one the runtime knows (src/schedules/spec.ts checks it first). */
export function zoneClock(zone: string): ZoneClock {
  const offset = zone === "UTC" ? () => 0 : offsetIn(zone);
  return {
    localDate(at) {
      const local = new Date(at + offset(at));
      return { year: local.getUTCFullYear(), month: local.getUTCMonth() + 1, day: local.getUTCDate() };
    },
    day(year, month, day) {
      const midnight = Date.UTC(year, month - 1, day);
      // The day's instants lie within these two (offsets are between -12 h and +14 h); one
      // offset at both ends is the whole day's (no zone changes its clock twice in 52 hours).
      let before = midnight - 14 * HOUR;
      let after = midnight + 38 * HOUR;
      const early = offset(before);
      const late = offset(after);
      if (early === late) return { midnight, shifts: false, instants: (wall) => [wall - early], skippedTo: (wall) => wall - early };
      // The change itself, to the second: the first instant on the later offset.
      while (after - before > 1000) {
        const mid = before + Math.floor((after - before) / 2000) * 1000;
        if (offset(mid) === early) before = mid;
        else after = mid;
      }
      const change = after;
      return {
        midnight,
        shifts: true,
        instants(wall) {
          const out: number[] = [];
          if (wall - early < change) out.push(wall - early);
          if (wall - late >= change) out.push(wall - late);
          return out;
        },
        skippedTo: () => change,
      };
    },
  };
}

/** The zone's offset from UTC at an instant, in ms (local = instant + offset). */
function offsetIn(zone: string): (at: number) => number {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  return (at) => {
    const second = Math.floor(at / 1000) * 1000;
    const f: Record<string, number> = {};
    for (const p of format.formatToParts(second)) if (p.type !== "literal") f[p.type] = Number(p.value);
    return Date.UTC(f.year!, f.month! - 1, f.day!, f.hour!, f.minute!, f.second!) - second;
  };
}
