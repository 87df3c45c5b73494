/**
 * `ms` as ISO 8601 text, or null for a number no Date holds. A reader (a page, an error,
 * a trace) shows what it can instead of throwing: a time stored before it was checked
 * (an older version took any finite `ctx.sleepUntil`) must not break the page for everyone.
 */
export function isoInstant(ms: number): string | null {
  const at = new Date(ms);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}
