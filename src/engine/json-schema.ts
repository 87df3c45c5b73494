import { dereference, format, type OutputUnit, type Schema, type SchemaDraft, Validator, validate } from "@cfworker/json-schema";
import * as z from "zod";
import { validationWorkProblem } from "./schema-bounds";
import type { JSONSchema } from "./types/json-schema";

/** One reason a value does not match: where (`path`, as zod gives it) and why. */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** A check's outcome, shaped like zod's `safeParse` (callers mix both). The value is passed on as sent: `default`s are not filled in. */
export type SchemaCheck = { success: true; data: unknown; error?: undefined } | { success: false; data?: undefined; error: { issues: SchemaIssue[] } };

export interface JsonSchemaValidator {
  safeParse(value: unknown): SchemaCheck;
}

// @cfworker/json-schema's checks of these formats backtrack on long hostile strings (url
// exponentially; uri, uri-reference and uri-template grow with the square of the length):
// the URL parser, linear, checks them instead. The table is the package's own, so the MCP
// server's validator gets the same checks.
const absolute = (s: string) => URL.canParse(s);
Object.assign(format, { uri: absolute, url: absolute, "uri-reference": (s: string) => URL.canParse(s, "https://a.invalid/") });
delete format["uri-template"];

const TYPES = ["null", "boolean", "object", "array", "number", "string", "integer"];
const schema = { $ref: "#" };
const schemas = { type: "array", items: schema };
const schemaMap = { type: "object", additionalProperties: schema };
const count = { type: "integer", minimum: 0 };
const names = { type: "array", items: { type: "string" } };

/**
 * What @cfworker/json-schema needs of a schema to check values against it without
 * throwing or silently checking nothing: each keyword it reads of the type it reads, and
 * regexes that compile (as it compiles them, with the `u` flag). Other keywords are
 * annotations it ignores.
 */
const META = {
  type: ["object", "boolean"],
  properties: {
    type: { anyOf: [{ enum: TYPES }, { type: "array", items: { enum: TYPES } }] },
    enum: { type: "array" },
    required: names,
    $ref: { type: "string" },
    pattern: { type: "string", format: "regex" },
    format: { type: "string" },
    ...Object.fromEntries(["minimum", "maximum", "multipleOf"].map((k) => [k, { type: "number" }])),
    ...Object.fromEntries(["exclusiveMinimum", "exclusiveMaximum"].map((k) => [k, { type: ["number", "boolean"] }])),
    ...Object.fromEntries(
      ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"].map((k) => [k, count]),
    ),
    uniqueItems: { type: "boolean" },
    ...Object.fromEntries(["properties", "$defs", "definitions", "dependentSchemas"].map((k) => [k, schemaMap])),
    patternProperties: { ...schemaMap, propertyNames: { format: "regex" } },
    items: { anyOf: [schema, schemas] },
    ...Object.fromEntries(["prefixItems", "allOf", "anyOf", "oneOf"].map((k) => [k, schemas])),
    ...Object.fromEntries(
      ["additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "contains", "propertyNames", "not", "if", "then", "else"].map(
        (k) => [k, schema],
      ),
    ),
    dependentRequired: { type: "object", additionalProperties: names },
    dependencies: { type: "object", additionalProperties: { anyOf: [schema, names] } },
  },
};

const meta = new Validator(META as Schema, "2020-12", false);

/**
 * Why the validator cannot read `schema` (`lookup` indexes its subschemas), as `where: reason`, or undefined. The schema is checked against
 * META, then every `$ref` must point at a subschema: the validator would throw mid-check.
 */
function readProblem(schema: unknown, lookup: Record<string, unknown>): string | undefined {
  const result = meta.validate(schema);
  if (!result.valid) return describeIssues({ issues: issuesOf(result.errors) });
  for (const s of Object.values(lookup)) {
    const target = typeof s === "object" && s !== null ? (s as { __absolute_ref__?: string }).__absolute_ref__ : undefined;
    if (target !== undefined && lookup[target] === undefined) return `$ref "${String((s as { $ref: unknown }).$ref).slice(0, 100)}" points at nothing`;
  }
  return undefined;
}

const compiled = new WeakMap<JSONSchema, JsonSchemaValidator>();

/**
 * A validator of values against a JSON Schema (@cfworker/json-schema; cached per schema
 * object). Throws on a schema it cannot read (a keyword of the wrong type, a `pattern` that
 * is not a regex, a `$ref` that points at nothing), which the catalog reports as a
 * worker-file error. A value too large to check within `MAX_VALIDATION_CHECKS` is refused
 * before the validator looks at it: validation is synchronous, and a run's object answers
 * nothing meanwhile.
 */
export function validatorFor(schema: JSONSchema): JsonSchemaValidator {
  let v = compiled.get(schema);
  if (!v) {
    // A copy: the validator marks the schema objects it reads (the catalog's are shared).
    const copy = structuredClone(schema);
    const draft = draftOf(schema);
    const lookup = dereference(copy as Schema);
    const problem = readProblem(copy, lookup);
    if (problem) throw new Error(problem);
    // Its uniqueItems compares every pair of items: the work estimate counts them.
    const pairwise = JSON.stringify(schema).includes('"uniqueItems":true');
    v = {
      safeParse(value) {
        const tooMuch = validationWorkProblem(schema, value, undefined, pairwise);
        if (tooMuch) return { success: false, error: { issues: [{ path: [], message: `the value ${tooMuch}` }] } };
        let result: ReturnType<typeof validate>;
        try {
          result = validate(value, copy as Schema, draft, lookup, true);
        } catch (err) {
          // The validator recurses with the value: one nested thousands deep overflows the stack.
          return { success: false, error: { issues: [{ path: [], message: `the value could not be checked: ${(err as Error).message}` }] } };
        }
        return result.valid ? { success: true, data: value } : { success: false, error: { issues: issuesOf(result.errors) } };
      },
    };
    compiled.set(schema, v);
  }
  return v;
}

/** The draft its `$schema` names (draft-04 and draft-07 read some keywords differently), else 2020-12. */
function draftOf(schema: JSONSchema): SchemaDraft {
  const named = typeof schema.$schema === "string" ? schema.$schema : "";
  return named.includes("draft-04") ? "4" : named.includes("draft-07") ? "7" : named.includes("2019-09") ? "2019-09" : "2020-12";
}

/** Keywords whose subschemas failing is expected (one branch of several): only their own error is told. */
const WHOLE = new Set(["anyOf", "oneOf", "not", "contains"]);

/**
 * The errors that say why, not where: the validator lists each failing subschema's error
 * before its subschemas' ("Property "a" does not match schema.", then a's own), so a
 * leaf is an error the next one does not descend from. Linear in the errors.
 */
function issuesOf(errors: OutputUnit[]): SchemaIssue[] {
  const told: OutputUnit[] = [];
  let whole: OutputUnit | undefined;
  for (const e of errors) {
    if (whole && under(e, whole)) continue;
    whole = WHOLE.has(e.keyword) ? e : undefined;
    told.push(e);
  }
  return told
    .filter((e, i) => !(told[i + 1] && under(told[i + 1]!, e)))
    .map((e) => {
      const path = pathOf(e.instanceLocation);
      if (e.keyword === "false") return { path, message: "not allowed" };
      // Where it is missing, as zod says it.
      const missing = e.keyword === "required" ? /required property "(.*)"\.$/s.exec(e.error)?.[1] : undefined;
      return missing === undefined ? { path, message: e.error.replace(/\.$/, "") } : { path: [...path, missing], message: "required" };
    });
}

/** Below `parent`: in one of its subschemas (a `false` subschema's error gives no location of its own, and follows the error of what holds it). */
const under = (e: OutputUnit, parent: OutputUnit) => e.keyword === "false" || e.keywordLocation.startsWith(`${parent.keywordLocation}/`);

/** `#/a/0/b~1c` → ["a", "0", "b/c"] (the validator's JSON pointer, URI-encoded). */
function pathOf(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((s) => decodeURIComponent(s).replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** `path: message; …` — short enough for a model or an HTTP 400 body. */
export function describeIssues(error: { readonly issues: readonly SchemaIssue[] }): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`).join("; ");
}

/** The JSON Schema a model sees for a zod input: no `$schema` noise. */
export function toolParameters(schema: z.ZodType): JSONSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" }) as JSONSchema;
  return rest;
}
