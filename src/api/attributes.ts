import * as z from "zod";

/**
 * A run's attributes: a few short `name → text` pairs that find it again (`GET /runs?attr.repo=acme/api`),
 * set when it starts (`POST /runs`, a trigger's payload) or by its code (`ctx.setAttribute`).
 * The grammar lives here, once, for every way in (src/engine/attributes.ts adds the run's own checks);
 * each check is flat (no regex that can backtrack).
 */

/** A name: a lowercase letter, then up to 31 of a-z 0-9 _ (it is part of the `attr.<name>` query parameter). */
export const ATTRIBUTE_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** At most this many attributes per run (the start's and those code set, counted by name). */
export const MAX_ATTRIBUTES = 10;
/** A value has 1 to this many characters (UTF-16 units, as JavaScript counts them). */
export const MAX_ATTRIBUTE_CHARS = 256;
/** The most `attr.<name>` criteria one filter may have. */
export const MAX_ATTRIBUTE_FILTERS = 3;

/**
 * What a value may not hold: C0 and C1 controls and DEL, the line and paragraph separators, and the
 * bidirectional overrides and isolates (which make a listing read otherwise than it sorts).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this pattern refuses.
export const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** Half of a surrogate pair standing alone: SQLite would keep it as U+FFFD, so two values would be one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type Attributes = Record<string, string>;

/** Set by edgework only (a child run's parent: durable-objects/run/children.ts); a start, a trigger or a run's code may not. */
export const PARENT_ATTRIBUTE = "parent_run";

/** Why `name` is no attribute name, or null. `settable`: one a start, a trigger or a run's code gives (not one edgework sets). */
export function attributeNameProblem(name: unknown, settable = true): string | null {
  if (typeof name !== "string" || !ATTRIBUTE_NAME.test(name))
    return `${JSON.stringify(String(name).slice(0, 40))} is not an attribute name: a lowercase letter, then up to 31 of a-z 0-9 _`;
  if (settable && name === PARENT_ATTRIBUTE) return `${PARENT_ATTRIBUTE} is set by edgework on a child run, and by nothing else`;
  return null;
}

const NOT_A_VALUE = "an attribute value is a string, a finite number or a boolean";

/**
 * A value as stored: text as is (in Unicode's NFC form, so one text is one value however it was
 * composed), a finite number or a boolean as its JSON text (`42`, `true`). Else why not.
 */
export function attributeValue(value: unknown): { value: string } | { problem: string } {
  let text: string;
  if (typeof value === "string") text = value;
  else if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") text = String(value);
  else return { problem: NOT_A_VALUE };
  if (text.length === 0 || text.length > MAX_ATTRIBUTE_CHARS) return { problem: `an attribute value has 1 to ${MAX_ATTRIBUTE_CHARS} characters` };
  if (UNSHOWABLE.test(text)) return { problem: "an attribute value may not hold control characters, line separators or bidirectional overrides" };
  if (LONE_SURROGATE.test(text)) return { problem: "an attribute value may not hold half of a surrogate pair" };
  return { value: text.normalize("NFC") };
}

/**
 * Attributes at an edge (a start's, `POST /runs`; a filter's, `attr.<name>` and `POST /operations`):
 * at most `max` names, each name and value checked by the grammar above, each problem reported at
 * the attribute's own path.
 */
export const attributesSchema = (max: number, what: string, settable = true) =>
  z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: NOT_A_VALUE }))
    .meta({ maxProperties: max })
    .transform((raw, ctx) => {
      const entries = Object.entries(raw);
      if (entries.length > max) {
        ctx.addIssue({ code: "custom", message: `at most ${max} ${what}, got ${entries.length}` });
        return z.NEVER;
      }
      const out: Attributes = {};
      for (const [name, value] of entries) {
        const nameProblem = attributeNameProblem(name, settable);
        const v = nameProblem ? { problem: nameProblem } : attributeValue(value);
        if ("problem" in v) ctx.addIssue({ code: "custom", path: [name], message: v.problem });
        else out[name] = v.value;
      }
      return out;
    });

/** `attr.<name>=<value>` criteria: each attribute has exactly that value. */
export const attributeCriteria = attributesSchema(MAX_ATTRIBUTE_FILTERS, "attribute criteria", false);
