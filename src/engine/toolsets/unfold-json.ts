/** Strings longer than this are left as they are (a page shows them cut anyway). */
const MAX_UNFOLD_CHARS = 100_000;
const MAX_DEPTH = 4;

/**
 * A value with JSON hidden inside strings parsed in place (`"{\"a\":1}"` → `{a: 1}`),
 * so a person reads a request body as its structure, not as escaped text. Only
 * objects and arrays are unfolded, at most `MAX_DEPTH` levels of strings deep.
 */
export function unfoldJson(value: unknown, depth = 0): unknown {
  if (typeof value === "string") {
    const t = value.trim();
    if (depth >= MAX_DEPTH || t.length > MAX_UNFOLD_CHARS || !/^[[{]/.test(t)) return value;
    try {
      return unfoldJson(JSON.parse(t), depth + 1);
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v) => unfoldJson(v, depth));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unfoldJson(v, depth)]));
  return value;
}

/**
 * A value as a person reads it: JSON (also JSON inside strings, or text that is JSON)
 * pretty-printed; any other text as it is. Cut to `max` characters, saying how many more.
 */
export function prettyValue(value: unknown, max = Infinity): string {
  const unfolded = unfoldJson(value);
  const text = typeof unfolded === "string" ? unfolded : (JSON.stringify(unfolded, null, 2) ?? "null");
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}
