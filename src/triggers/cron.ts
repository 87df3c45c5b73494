/**
 * Cron expressions as Cloudflare Cron Triggers read them: five fields (minute hour
 * day-of-month month day-of-week, 1 = Sunday), the grammar of Cloudflare's parser
 * (cloudflare/saffron) less what croner, our earlier parser, refused (ranges that wrap, `L-3`).
 * Per field, a list of `*`, `n`, `a-b`, each with an optional `/step` (`*` `/step` from the
 * field's first value); months and weekdays also by name (JAN-DEC, SUN-SAT, any case).
 * Alone in their field: `L` (last day of the month), `LW` (its last weekday), `15W` (the
 * weekday nearest the 15th, within the month), and for weekdays `6L` (the month's last
 * Friday) and `2#1` (its first Monday). A day of the month and a weekday, both given, are
 * either one (as in Cloudflare and Vixie cron). This module both reads an expression and says
 * which dates it matches; src/schedules/next-cron.ts finds its fires in a time zone.
 */

/** The day-of-month field. */
export type DayOfMonth =
  | { kind: "all" }
  | { kind: "days"; days: ReadonlySet<number> }
  | { kind: "last" }
  | { kind: "last-weekday" }
  | { kind: "nearest-weekday"; day: number };

/** The day-of-week field; weekdays 0 = Sunday … 6 = Saturday here (written 1-7). */
export type DayOfWeek =
  | { kind: "all" }
  | { kind: "days"; days: ReadonlySet<number> }
  | { kind: "last"; weekday: number }
  | { kind: "nth"; weekday: number; nth: number };

export interface Cron {
  /** Ascending, each once. */
  minutes: readonly number[];
  hours: readonly number[];
  dayOfMonth: DayOfMonth;
  /** 1-12. */
  months: ReadonlySet<number>;
  dayOfWeek: DayOfWeek;
  /**
   * One minute and one hour, each a plain number (`30 2 * * *`): fired once on a day whose
   * clock repeats that time, and right after a clock change that skips it. Any other
   * expression fires at every time of its that the clock shows, and none that it skips.
   */
  fixedTime: boolean;
}

export const MAX_CRON_CHARS = 100;

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface Field {
  name: string;
  min: number;
  max: number;
  /** Names of min, min + 1, …, read in any case. */
  names?: readonly string[];
  /** Said after a value out of range. */
  hint?: string;
}

const MINUTE: Field = { name: "minute", min: 0, max: 59 };
const HOUR: Field = { name: "hour", min: 0, max: 23 };
const DAY: Field = { name: "day-of-month", min: 1, max: 31 };
const MONTH: Field = { name: "month", min: 1, max: 12, names: MONTHS };
const WEEKDAY: Field = { name: "day-of-week", min: 1, max: 7, names: WEEKDAYS, hint: " (1 = Sunday, as Cloudflare counts; or SUN-SAT)" };

const DIGITS = /^\d{1,3}$/;
const NAME = /^[A-Za-z]{3}$/;

/** A cron expression read, or why it cannot be one (a sentence naming the field). */
export function parseCron(expression: string): Cron | string {
  if (expression.length > MAX_CRON_CHARS) return `is longer than ${MAX_CRON_CHARS} characters`;
  const fields = expression.split(" ");
  if (fields.length !== 5) return 'must be five fields separated by single spaces: minute hour day-of-month month day-of-week (e.g. "0 6 * * *")';
  const [minute, hour, day, month, weekday] = fields as [string, string, string, string, string];
  try {
    const minutes = [...list(minute, MINUTE)].sort((a, b) => a - b);
    const hours = [...list(hour, HOUR)].sort((a, b) => a - b);
    return {
      minutes,
      hours,
      dayOfMonth: dayOfMonth(day),
      months: list(month, MONTH),
      dayOfWeek: dayOfWeek(weekday),
      fixedTime: DIGITS.test(minute) && DIGITS.test(hour),
    };
  } catch (err) {
    if (err instanceof CronSyntax) return `is not a valid cron expression: ${err.message}`;
    throw err;
  }
}

/**
 * Why a cron expression cannot be a Cloudflare Cron Trigger, or null. Cloudflare matches
 * the expression as a string, so one written with doubled spaces or nicknames (`@daily`) is refused.
 */
export function cronProblem(expression: string): string | null {
  const cron = parseCron(expression);
  return typeof cron === "string" ? cron : null;
}

/** Whether `cron` fires on this calendar date (`month` 1-12, `dim` its number of days). */
export function cronMatchesDate(cron: Cron, year: number, month: number, day: number, dim: number): boolean {
  if (!cron.months.has(month)) return false;
  const dom = cron.dayOfMonth;
  const dow = cron.dayOfWeek;
  if (dom.kind === "all") return dow.kind === "all" || weekdayMatches(dow, year, month, day, dim);
  if (dow.kind === "all") return dayMatches(dom, year, month, day, dim);
  return dayMatches(dom, year, month, day, dim) || weekdayMatches(dow, year, month, day, dim);
}

/** 0 = Sunday. */
export const weekdayOf = (year: number, month: number, day: number) => (((Date.UTC(year, month - 1, day) / 86_400_000 + 4) % 7) + 7) % 7;

function dayMatches(dom: DayOfMonth, year: number, month: number, day: number, dim: number): boolean {
  switch (dom.kind) {
    case "all":
      return true;
    case "days":
      return dom.days.has(day);
    case "last":
      return day === dim;
    case "last-weekday":
      return day === nearestWeekday(year, month, dim, dim);
    case "nearest-weekday":
      return dom.day <= dim && day === nearestWeekday(year, month, dom.day, dim);
  }
}

/** The weekday nearest `day`, never leaving the month (1W on a Saturday the 1st is Monday the 3rd). */
function nearestWeekday(year: number, month: number, day: number, dim: number): number {
  const w = weekdayOf(year, month, day);
  if (w === 6) return day === 1 ? 3 : day - 1;
  if (w === 0) return day === dim ? day - 2 : day + 1;
  return day;
}

function weekdayMatches(dow: DayOfWeek, year: number, month: number, day: number, dim: number): boolean {
  const w = weekdayOf(year, month, day);
  switch (dow.kind) {
    case "all":
      return true;
    case "days":
      return dow.days.has(w);
    case "last":
      return w === dow.weekday && day + 7 > dim;
    case "nth":
      return w === dow.weekday && Math.ceil(day / 7) === dow.nth;
  }
}

class CronSyntax extends Error {}

const span = (from: number, to: number) => (from === to ? `${from}` : `${from}-${to}`);

function fail(field: Field, text: string, why: string): never {
  throw new CronSyntax(`${field.name} "${text}": ${why}`);
}

/** One value: digits, or a name where the field has names. */
function value(field: Field, text: string, whole: string): number {
  let n: number;
  if (DIGITS.test(text)) n = Number(text);
  else if (field.names && NAME.test(text)) {
    const at = field.names.indexOf(text.toUpperCase());
    if (at < 0) fail(field, whole, `"${text}" is not one of ${field.names[0]}-${field.names.at(-1)}`);
    n = field.min + at;
  } else fail(field, whole, `"${text || whole}" is not a number${field.names ? ` or a name (${field.names[0]}-${field.names.at(-1)})` : ""}`);
  if (n < field.min || n > field.max) fail(field, whole, `${n} is out of range ${field.min}-${field.max}${field.hint ?? ""}`);
  return n;
}

/** A comma-separated list of `*`, `n`, `a-b`, each with an optional `/step`. */
function list(text: string, field: Field): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(",")) {
    if (!item) fail(field, text, "an empty item in the list");
    const [range, step, extra] = item.split("/");
    if (extra !== undefined) fail(field, text, `"${item}" has more than one /`);
    let from = field.min;
    let to = field.max;
    if (range !== "*") {
      const [a, b, more] = range!.split("-");
      if (more !== undefined) fail(field, text, `"${item}" is not a range a-b`);
      from = value(field, a!, text);
      // `5/15` steps from 5 to the field's end (as Cloudflare reads it); `5` alone is 5.
      to = b !== undefined ? value(field, b, text) : step !== undefined ? field.max : from;
      if (from > to) fail(field, text, `the range ${range} runs backwards; split it at the field's end: ${span(from, field.max)},${span(field.min, to)}`);
    }
    let by = 1;
    if (step !== undefined) {
      if (!DIGITS.test(step)) fail(field, text, `the step "${step}" is not a number`);
      by = Number(step);
      const most = field.max - field.min;
      if (by < 1 || by > most) fail(field, text, `the step ${by} is not within 1-${most}`);
    }
    for (let n = from; n <= to; n += by) out.add(n);
  }
  return out;
}

const NEAREST_WEEKDAY = /^(\d{1,2})W$/;

function dayOfMonth(text: string): DayOfMonth {
  if (text === "*") return { kind: "all" };
  if (text === "L") return { kind: "last" };
  if (text === "LW") return { kind: "last-weekday" };
  const near = NEAREST_WEEKDAY.exec(text);
  if (near) return { kind: "nearest-weekday", day: value(DAY, near[1]!, text) };
  if (/[LW]/.test(text)) fail(DAY, text, "L, LW and nW (e.g. 15W) stand alone in the field");
  return { kind: "days", days: list(text, DAY) };
}

const LAST_WEEKDAY = /^(\d{1,3}|[A-Za-z]{3})L$/;
const NTH_WEEKDAY = /^(\d{1,3}|[A-Za-z]{3})#(\d{1,3})$/;

function dayOfWeek(text: string): DayOfWeek {
  if (text === "*") return { kind: "all" };
  const last = LAST_WEEKDAY.exec(text);
  if (last) return { kind: "last", weekday: value(WEEKDAY, last[1]!, text) - 1 };
  const nth = NTH_WEEKDAY.exec(text);
  if (nth) {
    const n = Number(nth[2]);
    if (n < 1 || n > 5) fail(WEEKDAY, text, `#${nth[2]}: a month has a 1st to a 5th of each weekday`);
    return { kind: "nth", weekday: value(WEEKDAY, nth[1]!, text) - 1, nth: n };
  }
  if (text.includes("#") || /\dL|^L|L$/.test(text)) fail(WEEKDAY, text, "nL (e.g. 6L, FRIL) and n#k (e.g. 2#1) stand alone in the field");
  return { kind: "days", days: new Set([...list(text, WEEKDAY)].map((d) => d - 1)) };
}
