import { ToolError } from "./errors";

/**
 * A run's attributes: a few short `name → text` pairs that find it again (`GET /runs?attr.repo=acme/api`),
 * set when it starts (`POST /runs`, a trigger's payload) or by its code (`ctx.setAttribute`).
 * The grammar lives here, once, for every way in; each check is flat (no regex that can backtrack).
 */

/** A name: a lowercase letter, then up to 31 of a-z 0-9 _ (it is part of the `attr.<name>` query parameter). */
export const ATTRIBUTE_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** At most this many attributes per run (the start's and those code set, counted by name). */
export const MAX_ATTRIBUTES = 10;
/** A value has 1 to this many characters (UTF-16 units, as JavaScript counts them). */
export const MAX_ATTRIBUTE_CHARS = 256;

/**
 * What a value may not hold: C0 and C1 controls and DEL, the line and paragraph separators, and the
 * bidirectional overrides and isolates (which make a listing read otherwise than it sorts).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this pattern refuses.
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** Half of a surrogate pair standing alone: SQLite would keep it as U+FFFD, so two values would be one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type Attributes = Record<string, string>;

/** Why `name` is no attribute name, or null. */
export function attributeNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || !ATTRIBUTE_NAME.test(name))
    return `${JSON.stringify(String(name).slice(0, 40))} is not an attribute name: a lowercase letter, then up to 31 of a-z 0-9 _`;
  return null;
}

/**
 * A value as stored: text as is (in Unicode's NFC form, so one text is one value however it was
 * composed), a finite number or a boolean as its JSON text (`42`, `true`). Else why not.
 */
export function attributeValue(value: unknown): { value: string } | { problem: string } {
  let text: string;
  if (typeof value === "string") text = value;
  else if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") text = String(value);
  else return { problem: "an attribute value is a string, a finite number or a boolean" };
  if (text.length === 0 || text.length > MAX_ATTRIBUTE_CHARS) return { problem: `an attribute value has 1 to ${MAX_ATTRIBUTE_CHARS} characters` };
  if (UNSHOWABLE.test(text)) return { problem: "an attribute value may not hold control characters, line separators or bidirectional overrides" };
  if (LONE_SURROGATE.test(text)) return { problem: "an attribute value may not hold half of a surrogate pair" };
  return { value: text.normalize("NFC") };
}

/** `name` and `value` checked for `ctx.setAttribute` (`what` names the call in the error the code reads). */
export function checkedAttribute(name: unknown, value: unknown, what: string): { name: string; value: string } {
  const nameProblem = attributeNameProblem(name);
  if (nameProblem) throw new ToolError(`${what}: ${nameProblem}`);
  const v = attributeValue(value);
  if ("problem" in v) throw new ToolError(`${what}("${name as string}"): ${v.problem}`);
  return { name: name as string, value: v.value };
}

/**
 * A whole set of attributes (a start's): each name and value checked, at most MAX_ATTRIBUTES.
 * `problems` names each bad entry by its name (`where` prefixes it: `attributes.repo`).
 */
export function checkedAttributes(raw: unknown, where = "attributes"): { attributes: Attributes } | { problems: string[] } {
  if (raw === undefined || raw === null) return { attributes: {} };
  if (typeof raw !== "object" || Array.isArray(raw)) return { problems: [`${where}: an object of attribute names to values`] };
  const entries = Object.entries(raw);
  if (entries.length > MAX_ATTRIBUTES) return { problems: [`${where}: at most ${MAX_ATTRIBUTES} attributes, got ${entries.length}`] };
  const attributes: Attributes = {};
  const problems: string[] = [];
  for (const [name, value] of entries) {
    const nameProblem = attributeNameProblem(name);
    if (nameProblem) {
      problems.push(`${where}: ${nameProblem}`);
      continue;
    }
    const v = attributeValue(value);
    if ("problem" in v) problems.push(`${where}.${name}: ${v.problem}`);
    else attributes[name] = v.value;
  }
  return problems.length ? { problems } : { attributes };
}

/** Attributes in one order (by name), so equal sets are equal JSON text. */
export function sortedAttributes(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
