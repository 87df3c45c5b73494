import type { Substitution } from "./interpolate";

/**
 * Shorter values are not redacted: replacing "true", "8080" or "eu" wherever they
 * occur would garble ordinary results, and a value that short is no credential.
 */
export const MIN_REDACTED_LENGTH = 8;

/**
 * Replaces each value, in the forms an upstream may echo it — as is, escaped inside
 * a JSON string, URL-encoded (also with `+` for spaces) — by `[redacted:NAME]`.
 * Not covered: other encodings (base64, hex, HTML entities) and fragments of a value.
 */
export function redactor(secrets: readonly Substitution[]): (text: string) => string {
  const marks = new Map<string, string>();
  for (const { name, value } of secrets) {
    if (value.length < MIN_REDACTED_LENGTH) continue;
    const url = encodeURIComponent(value);
    for (const form of [value, JSON.stringify(value).slice(1, -1), url, url.replaceAll("%20", "+")])
      if (!marks.has(form)) marks.set(form, `[redacted:${name}]`);
  }
  // Longest first, so a value that contains another is replaced whole.
  const forms = [...marks].sort((a, b) => b[0].length - a[0].length);
  return (text) => forms.reduce((t, [form, mark]) => (t.includes(form) ? t.replaceAll(form, mark) : t), text);
}
