/** The one placeholder a scheduled trigger's input may use. */
export const SCHEDULED_TIME = "{{scheduled_time}}";

/**
 * The input with every `{{scheduled_time}}` inside its string values (not keys)
 * replaced by the event's time. Plain substring replacement: no expressions, no
 * other placeholders, nothing from outside the trigger file is substituted.
 */
export function withScheduledTime(value: unknown, iso: string): unknown {
  if (typeof value === "string") return value.split(SCHEDULED_TIME).join(iso);
  if (Array.isArray(value)) return value.map((v) => withScheduledTime(v, iso));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withScheduledTime(v, iso)]));
  return value;
}
