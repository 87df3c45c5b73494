/**
 * What an approver may put in a call's place: edited arguments (checked against the
 * tool's input schema, bounded) or a result given instead of running the tool. The
 * approver is trusted to decide, not to write well-formed input: their text reaches
 * a tool, the journal and the model, so it is checked like a model's.
 */

import { describeIssues, validatorFor } from "../json-schema";
import { MAX_ARGS_DEPTH, nestedDeeper, utf8Bytes } from "../journal/bounds";
import { withoutKeywords } from "../schema-bounds";
import type { JSONSchema } from "../types/json-schema";

/** Edited arguments as JSON, in UTF-8 bytes: they are kept in the decision's journal step, beside the call's result. */
export const MAX_EDIT_BYTES = 64 * 1024;
/** A result given in place of a call: a model reads it as the tool's result. */
export const MAX_RESPONSE_CHARS = 32_000;

/**
 * Not checked here: a tool's schema may be an MCP server's, whose regex can backtrack for
 * hours on a string of the model's (the form sends the asked arguments back), and the check
 * is synchronous in the run's object. The tool checks its own input when it runs.
 */
const REGEXES = new Set(["pattern"]);

/**
 * Why `args` may not replace a call's arguments, as `arguments.<field>: reason`, or null:
 * checked against the schema but for its regexes (`pattern`, `patternProperties`).
 * Beyond the schema, a field the schema does not name is refused wherever the schema
 * names its fields and does not say more are allowed: an approver's typo
 * (`tittle`) must not pass unseen because the schema was lenient.
 */
export function editProblem(schema: JSONSchema, args: unknown): string | null {
  let json: string | undefined;
  try {
    json = JSON.stringify(args) as string | undefined;
  } catch {
    return "arguments: not JSON";
  }
  if (json === undefined) return "arguments: missing";
  const bytes = utf8Bytes(json);
  if (bytes > MAX_EDIT_BYTES) return `arguments: ${bytes} bytes as JSON; at most ${MAX_EDIT_BYTES}`;
  if (nestedDeeper(args, MAX_ARGS_DEPTH)) return `arguments: nested deeper than ${MAX_ARGS_DEPTH} levels`;
  const unknown = unknownField(schema, args, ["arguments"]);
  if (unknown) return `${unknown}: not a field of the tool's input schema`;
  let check: ReturnType<ReturnType<typeof validatorFor>["safeParse"]>;
  try {
    // Read whole (one the validator cannot read takes no edit), checked without its regexes.
    validatorFor(schema);
    check = validatorFor(withoutKeywords(schema, REGEXES) as JSONSchema).safeParse(args);
  } catch (err) {
    return `arguments: the tool's input schema cannot be checked (${(err as Error).message}), so its calls take no edit`;
  }
  return check.success ? null : describeIssues({ issues: check.error.issues.map((i) => ({ ...i, path: ["arguments", ...i.path] })) });
}

/** Why `text` may not stand in for a call's result, or null. */
export function responseProblem(text: string): string | null {
  if (!text.trim()) return "result: empty";
  return text.length > MAX_RESPONSE_CHARS ? `result: ${text.length} characters; at most ${MAX_RESPONSE_CHARS}` : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The path of the first field of `value` that `schema` does not name, where the schema
 * lists `properties` and allows no others (no `additionalProperties`, `patternProperties`
 * or `unevaluatedProperties`, or `false`); followed into named properties and
 * one-schema `items`. Other keywords (`$ref`, `anyOf`…) are left to the validator.
 * Depth is bounded by the caller (`nestedDeeper`).
 */
function unknownField(schema: unknown, value: unknown, path: string[]): string | null {
  if (!isObject(schema)) return null;
  if (Array.isArray(value)) {
    if (!isObject(schema.items)) return null;
    for (let i = 0; i < value.length; i++) {
      const found = unknownField(schema.items, value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (!isObject(value) || !isObject(schema.properties)) return null;
  const more = (k: string) => schema[k] !== undefined && schema[k] !== false;
  const open = more("additionalProperties") || more("patternProperties") || more("unevaluatedProperties");
  for (const key of Object.keys(value)) {
    const sub = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (sub === undefined) {
      if (open) continue;
      return [...path, key].join(".").slice(0, 200);
    }
    const found = unknownField(sub, value[key], [...path, key]);
    if (found) return found;
  }
  return null;
}
