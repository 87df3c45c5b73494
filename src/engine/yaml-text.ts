/**
 * JSON data written as block-style YAML, for text people read and commit (a created
 * worker's frontmatter). The `yaml` package would do it but weighs ~30 KiB gzipped in
 * the bundle, which otherwise keeps it to build time (src/build/yaml.ts): JSON's
 * subset needs only this. Every string that is not plainly a word is double-quoted
 * with JSON's escapes (valid YAML escapes), so no value spans lines: a line of
 * `---` in a value cannot end a frontmatter early.
 */

/** Plain scalars we allow: a letter, then letters, digits and a few marks that mean nothing in block YAML. */
const PLAIN = /^[A-Za-z][A-Za-z0-9_./()-]*(?: [A-Za-z0-9_./()-]+)*$/;
/** Words YAML 1.1 or 1.2 readers take for booleans or null. */
const RESERVED = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);
/** Characters JSON leaves raw that YAML must not see raw (non-printable in YAML, or line breaks to YAML 1.1 readers). */
const UNPRINTABLE = /[\u007f-\u0084\u0086-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;
/** YAML refuses an implicit key longer than this; a longer one is written as `? key`. */
const MAX_IMPLICIT_KEY = 1024;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function quoted(s: string): string {
  return JSON.stringify(s).replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export const yamlString = (s: string): string => (PLAIN.test(s) && !RESERVED.has(s.toLowerCase()) ? s : quoted(s));

/** A scalar or an empty collection on one line; null for a collection that needs lines of its own. */
function inline(v: Json): string | null {
  if (v === null || typeof v === "boolean" || typeof v === "number") return JSON.stringify(v);
  if (typeof v === "string") return yamlString(v);
  if (Array.isArray(v)) return v.length ? null : "[]";
  return Object.keys(v).length ? null : "{}";
}

const indented = (lines: string[]) => lines.map((l) => `  ${l}`);

/** `first` on the indicator's line, the rest under it. */
const after = (indicator: string, lines: string[]) => [`${indicator} ${lines[0]}`, ...indented(lines.slice(1))];

/** The lines of a node at indentation 0. */
function lines(v: Json): string[] {
  const one = inline(v);
  if (one !== null) return [one];
  if (Array.isArray(v)) return v.flatMap((item) => after("-", lines(item)));
  return Object.entries(v as Record<string, Json>).flatMap(([k, item]) => entry(k, item));
}

function entry(k: string, v: Json): string[] {
  const key = yamlString(k);
  const one = inline(v);
  if (key.length <= MAX_IMPLICIT_KEY) return one !== null ? [`${key}: ${one}`] : [`${key}:`, ...indented(lines(v))];
  return [`? ${key}`, ...(one !== null ? [`: ${one}`] : [":", ...indented(lines(v))])];
}

/** YAML text for a JSON value (what JSON.stringify keeps of it), ending without a newline. */
export function toYaml(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error("toYaml: the value has no JSON form");
  return lines(JSON.parse(text) as Json).join("\n");
}
