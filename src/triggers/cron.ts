import { CronPattern } from "croner";

/**
 * Why a cron expression cannot be a Cloudflare Cron Trigger, or null: five
 * fields (minute hour day-of-month month day-of-week, UTC, 1 = Sunday as
 * Cloudflare counts), parsed by croner. Cloudflare matches the expression as a
 * string, so one written with doubled spaces or nicknames (`@daily`) is refused.
 */
export function cronProblem(expression: string): string | null {
  if (expression.length > 100) return "is longer than 100 characters";
  if (expression.split(" ").length !== 5)
    return 'must be five fields separated by single spaces: minute hour day-of-month month day-of-week (e.g. "0 6 * * *")';
  try {
    new CronPattern(expression, "UTC", { mode: "5-part", alternativeWeekdays: true });
    return null;
  } catch (err) {
    return `is not a valid cron expression: ${(err as Error).message}`;
  }
}
