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

/** Text that is JSON (or JSON with JSON inside strings) pretty-printed; any other text as it is. */
export function prettyBody(text: string): string {
  const unfolded = unfoldJson(text);
  return typeof unfolded === "string" ? unfolded : JSON.stringify(unfolded, null, 2);
}
