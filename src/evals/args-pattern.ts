import { ESCAPED, globMatcher, MAX_GLOB_LENGTH } from "../engine/glob";
import { stableJson } from "../engine/ids";

/** Longer strings are not matched against a glob (the walk is linear in the text, but the text may be a whole page). */
export const MAX_MATCHED_TEXT = 200_000;

/**
 * Whether a tool call's arguments fit a pattern from an eval file; undefined when they
 * do, else where and why not (`args.url: "…/comments" does not match "*\/labels"`).
 * An object pattern names only the keys it cares about; an array matches element-wise;
 * a string with `*` or `?` is a glob (engine/glob.ts: no regex is built from the file),
 * any other value must be equal. `\*`, `\?` and `\\` stand for the character itself: a
 * string with no other `*` or `?` is literal (`literalPattern` writes any text so).
 */
export function argsMismatch(pattern: unknown, value: unknown, at = "args"): string | undefined {
  if (pattern !== null && typeof pattern === "object") {
    if (Array.isArray(pattern)) {
      if (!Array.isArray(value) || value.length !== pattern.length) return `${at}: expected an array of ${pattern.length}, got ${shortJson(value)}`;
      for (const [i, p] of pattern.entries()) {
        const miss = argsMismatch(p, value[i], `${at}[${i}]`);
        if (miss) return miss;
      }
      return undefined;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) return `${at}: expected an object, got ${shortJson(value)}`;
    for (const [key, p] of Object.entries(pattern)) {
      const miss = argsMismatch(p, (value as Record<string, unknown>)[key], `${at}.${key}`);
      if (miss) return miss;
    }
    return undefined;
  }
  if (typeof pattern === "string") {
    const literal = literalText(pattern);
    if (literal !== undefined) return literal === value ? undefined : `${at}: expected ${shortJson(literal)}, got ${shortJson(value)}`;
    if (typeof value !== "string") return `${at}: expected a string matching ${JSON.stringify(pattern)}, got ${shortJson(value)}`;
    if (pattern.length > MAX_GLOB_LENGTH)
      return `${at}: the glob ${shortJson(pattern)} is ${pattern.length} characters, over the ${MAX_GLOB_LENGTH} a glob may have`;
    if (value.length > MAX_MATCHED_TEXT) return `${at}: ${value.length} characters, over the ${MAX_MATCHED_TEXT} a glob is matched against`;
    return globMatcher(pattern, { escapes: true })(value) ? undefined : `${at}: ${shortJson(value)} does not match ${JSON.stringify(pattern)}`;
  }
  return stableJson(pattern) === stableJson(value) ? undefined : `${at}: expected ${shortJson(pattern)}, got ${shortJson(value)}`;
}

/** A pattern that matches exactly `value`: every string in it with `*`, `?` and `\` escaped. */
export function literalPattern(value: unknown): unknown {
  if (typeof value === "string") return value.replace(/[*?\\]/g, (c) => `\\${c}`);
  if (Array.isArray(value)) return value.map(literalPattern);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literalPattern(v)]));
  return value;
}

/** The text a pattern without wildcards stands for (its escapes undone); undefined for a glob. */
function literalText(pattern: string): string | undefined {
  let text = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && ESCAPED.has(pattern[i + 1]!)) text += pattern[++i];
    else if (c === "*" || c === "?") return undefined;
    else text += c;
  }
  return text;
}

/** A value in a message, cut to fit a line. */
export function shortJson(value: unknown, max = 160): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
