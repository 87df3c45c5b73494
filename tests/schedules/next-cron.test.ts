import { describe, expect, it } from "vitest";
import { nextFire } from "../../src/schedules/spec";

/** The next `n` fires of `cron` in `timezone` after `from`, as ISO instants (UTC). */
function fires(cron: string, timezone: string, from: string, n: number): string[] {
  const out: string[] = [];
  let after = Date.parse(from);
  for (let i = 0; i < n; i++) {
    const next = nextFire({ cron, timezone }, 0, after);
    if (next === null) break;
    out.push(new Date(next).toISOString());
    after = next;
  }
  return out;
}

// Europe/Berlin: 2030-03-31 the clock goes 02:00 → 03:00 (01:00 UTC), 2030-10-27 03:00 → 02:00 (01:00 UTC).
describe("a runtime schedule's cron in a time zone", () => {
  it("fires by the zone's clock, strictly after the given instant", () => {
    expect(fires("0 9 * * MON", "Europe/Berlin", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-01-07T08:00:00.000Z", "2030-01-14T08:00:00.000Z"]);
    // In summer time the same 09:00 is an hour earlier in UTC.
    expect(fires("0 9 * * MON", "Europe/Berlin", "2030-06-30T07:00:00Z", 2)).toEqual(["2030-07-01T07:00:00.000Z", "2030-07-08T07:00:00.000Z"]);
    // Exactly at a fire: the next one; half a second before: that one.
    expect(fires("0 9 * * MON", "Europe/Berlin", "2030-01-07T08:00:00Z", 1)).toEqual(["2030-01-14T08:00:00.000Z"]);
    expect(fires("0 9 * * MON", "Europe/Berlin", "2030-01-07T07:59:59.500Z", 1)).toEqual(["2030-01-07T08:00:00.000Z"]);
    // Offsets of hours and minutes, either side of UTC; the zone's date, not UTC's, is the day matched.
    expect(fires("30 0 1 * *", "Asia/Kolkata", "2030-01-15T00:00:00Z", 1)).toEqual(["2030-01-31T19:00:00.000Z"]);
    expect(fires("0 23 L * *", "America/New_York", "2030-01-15T00:00:00Z", 1)).toEqual(["2030-02-01T04:00:00.000Z"]);
  });

  it("a clock set forward: one fixed time fires right after the skip; other times it skips do not fire", () => {
    expect(fires("30 2 * * *", "Europe/Berlin", "2030-03-30T12:00:00Z", 3)).toEqual([
      "2030-03-31T01:00:00.000Z", // 03:00, the first time after the skip
      "2030-04-01T00:30:00.000Z",
      "2030-04-02T00:30:00.000Z",
    ]);
    expect(fires("30 1-3 * * *", "Europe/Berlin", "2030-03-30T12:00:00Z", 3)).toEqual([
      "2030-03-31T00:30:00.000Z", // 01:30
      "2030-03-31T01:30:00.000Z", // 03:30; 02:30 never came
      "2030-03-31T23:30:00.000Z",
    ]);
    expect(fires("*/30 * * * *", "Europe/Berlin", "2030-03-31T00:00:00Z", 3)).toEqual([
      "2030-03-31T00:30:00.000Z", // 01:30
      "2030-03-31T01:00:00.000Z", // 03:00
      "2030-03-31T01:30:00.000Z",
    ]);
  });

  it("a clock set back: one fixed time fires once, at its first showing; other times fire at each", () => {
    expect(fires("30 2 * * *", "Europe/Berlin", "2030-10-26T12:00:00Z", 2)).toEqual(["2030-10-27T00:30:00.000Z", "2030-10-28T01:30:00.000Z"]);
    // Between the two showings of 02:30: not again that night.
    expect(fires("30 2 * * *", "Europe/Berlin", "2030-10-27T00:40:00Z", 1)).toEqual(["2030-10-28T01:30:00.000Z"]);
    expect(fires("*/30 2 * * *", "Europe/Berlin", "2030-10-27T00:10:00Z", 4)).toEqual([
      "2030-10-27T00:30:00.000Z", // 02:30 summer time
      "2030-10-27T01:00:00.000Z", // 02:00 winter time
      "2030-10-27T01:30:00.000Z", // 02:30 winter time
      "2030-10-28T01:00:00.000Z",
    ]);
  });

  it("a change at midnight, a change of half an hour", () => {
    // America/Santiago, 2030-09-08: 00:00 → 01:00 (04:00 UTC); 00:30 that day fires at 01:00.
    expect(fires("30 0 * * *", "America/Santiago", "2030-09-07T12:00:00Z", 2)).toEqual(["2030-09-08T04:00:00.000Z", "2030-09-09T03:30:00.000Z"]);
    // Australia/Lord_Howe, 2030-10-06: 02:00 → 02:30 (+10:30 → +11). 02:15 was skipped, 02:45 was not.
    expect(fires("15 2 * * *", "Australia/Lord_Howe", "2030-10-05T00:00:00Z", 2)).toEqual(["2030-10-05T15:30:00.000Z", "2030-10-06T15:15:00.000Z"]);
    expect(fires("15,45 2 * * *", "Australia/Lord_Howe", "2030-10-05T12:00:00Z", 2)).toEqual(["2030-10-05T15:45:00.000Z", "2030-10-06T15:15:00.000Z"]);
  });

  it("never firing is null in any zone", () => {
    expect(fires("0 0 31 2 *", "Europe/Berlin", "2030-01-01T00:00:00Z", 1)).toEqual([]);
    expect(fires("0 0 30W 2 *", "Pacific/Chatham", "2030-01-01T00:00:00Z", 1)).toEqual([]);
  });
});
