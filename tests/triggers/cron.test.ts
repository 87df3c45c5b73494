import { describe, expect, it } from "vitest";
import { nextFire } from "../../src/schedules/spec";
import { cronProblem } from "../../src/triggers/cron";

/** The next `n` fires after `from` (UTC), as ISO dates or times. */
function fires(cron: string, from: string, n = 4, timezone?: string): string[] {
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
const days = (cron: string, from: string, n = 4) => fires(cron, from, n).map((t) => t.slice(0, 10));

describe("cron expressions, as Cloudflare Cron Triggers read them", () => {
  it("reads numbers, names in any case, *, ranges, steps and lists; 1 = Sunday", () => {
    for (const ok of [
      "0 6 * * *",
      "*/15 9-17 * * MON-FRI",
      "0 9 * * MON",
      "0 9 * * mon",
      "0 0 * jan-Mar *",
      "5-10/2 * * * *",
      "5/15 * * * *",
      "*/5,10,40-45 * * * *",
      "00 007 * * *",
      "0 0 * * 1-7/2",
      "0 0 31 2 *",
    ])
      expect(cronProblem(ok), ok).toBeNull();
    expect(fires("5/15 * * * *", "2030-01-01T00:00:00Z")).toEqual([
      "2030-01-01T00:05:00.000Z",
      "2030-01-01T00:20:00.000Z",
      "2030-01-01T00:35:00.000Z",
      "2030-01-01T00:50:00.000Z",
    ]);
    // 2030-01-06 is a Sunday: 1 and SUN both name it.
    expect(days("0 0 * * 1", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-01-06", "2030-01-13"]);
    expect(days("0 0 * * SUN", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-01-06", "2030-01-13"]);
    expect(days("0 0 * * 7", "2030-01-01T00:00:00Z", 1)).toEqual(["2030-01-05"]);
    expect(days("0 0 * FEB,apr *", "2030-01-31T00:00:00Z", 2)).toEqual(["2030-02-01", "2030-02-02"]);
  });

  it("reads L, LW and nW in the day of the month, nL and n#k in the day of the week", () => {
    expect(days("0 0 L * *", "2032-01-31T00:00:00Z", 3)).toEqual(["2032-02-29", "2032-03-31", "2032-04-30"]);
    // 2030-06-30 is a Sunday, 2030-03-31 too: the last weekday is the Friday before.
    expect(days("59 23 LW * *", "2030-02-01T00:00:00Z", 5)).toEqual(["2030-02-28", "2030-03-29", "2030-04-30", "2030-05-31", "2030-06-28"]);
    // 2030-06-01 is a Saturday: 1W is Monday the 3rd (never the month before). 2030-03-31 is a Sunday: 31W is Friday the 29th.
    expect(days("0 0 1W * *", "2030-05-15T00:00:00Z", 1)).toEqual(["2030-06-03"]);
    expect(days("0 0 31W * *", "2030-03-01T00:00:00Z", 2)).toEqual(["2030-03-29", "2030-05-31"]);
    expect(days("0 18 * * 6L", "2030-01-01T00:00:00Z", 3)).toEqual(["2030-01-25", "2030-02-22", "2030-03-29"]);
    expect(days("0 18 * * friL", "2030-01-01T00:00:00Z", 1)).toEqual(["2030-01-25"]);
    expect(days("0 0 * * MON#1", "2030-01-01T00:00:00Z", 3)).toEqual(["2030-01-07", "2030-02-04", "2030-03-04"]);
    expect(days("0 0 * * 1#5", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-03-31", "2030-06-30"]);
  });

  it("a day of the month and a weekday, both given, are either one; the 1st after February is not skipped", () => {
    // croner, the parser before ours, skipped March 1 here.
    expect(days("59 0 1,16,31 * FRI#1", "2031-02-16T02:00:00Z", 4)).toEqual(["2031-03-01", "2031-03-07", "2031-03-16", "2031-03-31"]);
    expect(days("0 0 */15 * MON", "2030-02-01T00:00:00Z", 3)).toEqual(["2030-02-04", "2030-02-11", "2030-02-16"]);
  });

  it("refuses what Cloudflare refuses, naming the field and the reason", () => {
    for (const [bad, why] of [
      ["0 6 * *", /^must be five fields separated by single spaces/],
      ["0  6 * * *", /^must be five fields/],
      ["@daily", /^must be five fields/],
      ["0 0 6 * * *", /^must be five fields/],
      ["61 6 * * *", /^is not a valid cron expression: minute "61": 61 is out of range 0-59$/],
      ["0 24 * * *", /hour "24": 24 is out of range 0-23/],
      ["0 0 0 * *", /day-of-month "0": 0 is out of range 1-31/],
      ["0 0 * 13 *", /month "13": 13 is out of range 1-12/],
      ["0 0 * * 0", /day-of-week "0": 0 is out of range 1-7 \(1 = Sunday/],
      ["0 0 * * 8", /day-of-week "8"/],
      ["0 0 * * MONDAY", /"MONDAY" is not a number or a name \(SUN-SAT\)/],
      ["0 0 * JANUARY *", /month "JANUARY"/],
      ["10-5 * * * *", /the range 10-5 runs backwards; split it at the field's end: 10-59,0-5/],
      ["0 0 * * SAT-SUN", /runs backwards; split it at the field's end: 7,1$/],
      ["1,,2 * * * *", /minute "1,,2": an empty item/],
      ["0 0 ? * *", /day-of-month "\?"/],
      ["0 0 1 * +MON", /day-of-week "\+MON"/],
      ["0 0 L-3 * *", /L, LW and nW \(e\.g\. 15W\) stand alone/],
      ["0 0 L,15 * *", /stand alone/],
      ["0 0 * * 6L,2", /nL \(e\.g\. 6L, FRIL\) and n#k \(e\.g\. 2#1\) stand alone/],
      ["0 0 * * FRI#L", /stand alone/],
      ["0 0 * * 1#6", /#6: a month has a 1st to a 5th of each weekday/],
      ["* * * * L", /stand alone/],
      ["1-2-3 * * * *", /is not a range a-b/],
      ["1/2/3 * * * *", /more than one \//],
    ] as const)
      expect(cronProblem(bad), bad).toMatch(why);
  });

  it("hostile expressions: too long, thousands of commas, huge steps and numbers are refused at once", () => {
    expect(cronProblem("x".repeat(10_000))).toBe("is longer than 100 characters");
    expect(cronProblem(`${",".repeat(5000)} * * * *`)).toBe("is longer than 100 characters");
    expect(cronProblem(`${",".repeat(90)} * * * *`)).toMatch(/minute ".*": an empty item/);
    // As many items as fit in 100 characters: each is one value.
    const many = Array.from({ length: 46 }, (_, i) => i % 10).join(",");
    expect(cronProblem(`${many} * * * *`)).toBeNull();
    for (const [bad, why] of [
      ["*/60 * * * *", /the step 60 is not within 1-59/],
      ["* */24 * * *", /the step 24 is not within 1-23/],
      ["0 0 */31 * *", /the step 31 is not within 1-30/],
      ["0 0 * */12 *", /the step 12 is not within 1-11/],
      ["0 0 * * */7", /the step 7 is not within 1-6/],
      ["*/0 * * * *", /the step 0 is not within 1-59/],
      ["*/99999999999999999999 * * * *", /the step "99999999999999999999" is not a number/],
      ["99999999999999999999 * * * *", /"99999999999999999999" is not a number/],
      ["1e3 * * * *", /"1e3" is not a number/],
      ["0x1 * * * *", /"0x1" is not a number/],
      ["-1 * * * *", /minute "-1"/],
    ] as const)
      expect(cronProblem(bad), bad).toMatch(why);
  });

  it("never firing is null, however rare a real fire is", () => {
    for (const never of ["0 0 31 2 *", "0 0 30 2 *", "* * 31 4,6,9,11 *", "0 0 30W 2 *"]) expect(fires(never, "2030-01-01T00:00:00Z", 1), never).toEqual([]);
    // 2100 is no leap year: after February 2096 the 29th comes in 2104.
    expect(days("0 0 29 2 *", "2096-03-01T00:00:00Z", 1)).toEqual(["2104-02-29"]);
    // A fifth Sunday in February: a leap year whose February begins on a Sunday.
    expect(days("0 0 * 2 1#5", "2033-01-01T00:00:00Z", 1)).toEqual(["2060-02-29"]);
  });
});
