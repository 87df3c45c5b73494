/**
 * Approval rules checked against the input schema of the tool they are on, when the
 * catalog knows it (a kind's static tools, a worker's or a function's input): each
 * path must name a field the schema declares, and each test must fit that field's
 * type and values. A typo (`amout`), a number compared with a string field or a
 * method the tool never takes (`PSOT`) fails the build instead of never matching.
 * Where the schema allows any value (no type, open objects) the rule is accepted:
 * at run time whatever cannot be compared fails closed.
 */
import type { ArgRules, FieldTest } from "../types/arg-rules";
import type { JSONSchema } from "../types/json-schema";
import type { RuleProblem } from "./arg-rules";

/** Schema nodes looked at for one path: anyOf, allOf and $ref cannot make a walk long. */
const MAX_NODES = 64;
/** How many of a field's enum values an error lists. */
const SHOWN_VALUES = 10;

const isMapping = (v: unknown): v is JSONSchema => typeof v === "object" && v !== null && !Array.isArray(v);

/** What a schema says of the value at a path: its types and the values it takes (undefined: any). */
interface Leaf {
  types?: Set<string>;
  values?: unknown[];
}

/** Every problem of `rules` against `input`, with the field below the tool's entry (`ask_when.amount`). */
export function ruleSchemaProblems(rules: ArgRules, input: JSONSchema): RuleProblem[] {
  const problems: RuleProblem[] = [];
  for (const when of ["deny_when", "ask_when"] as const) {
    const conditions = rules[when] ?? [];
    conditions.forEach((condition, i) => {
      const at = conditions.length > 1 ? `${when}.${i}` : when;
      for (const [path, test] of Object.entries(condition)) {
        const leaf = leafAt(input, path.split("."));
        const reason = typeof leaf === "string" ? leaf : leaf && testProblem(path, test, leaf);
        if (reason) problems.push({ field: `${at}.${path}`, reason });
      }
    });
  }
  return problems;
}

/** The node's types (integer counted as number), from `type` or its enum/const values; undefined: any. */
function typesOf(node: JSONSchema): Set<string> | undefined {
  const t = node.type;
  if (typeof t === "string" || Array.isArray(t)) return new Set((Array.isArray(t) ? t : [t]).map((x) => (x === "integer" ? "number" : String(x))));
  const values = valuesOf(node);
  return values && new Set(values.map(jsonType));
}

/** A node that only stands for others (anyOf, oneOf, allOf, $ref): `expand` has added them beside it. */
const isWrapper = (node: JSONSchema) =>
  node.type === undefined && valuesOf(node) === undefined && node.properties === undefined && !!(node.anyOf || node.oneOf || node.allOf || node.$ref);

const valuesOf = (node: JSONSchema): unknown[] | undefined => ("const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined);
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * `nodes` and what they stand for: each node's anyOf, oneOf and allOf members and its
 * local `$ref` (`#/$defs/x`, `#/definitions/x`), within the shared `budget`; null when
 * the budget ran out (the schema is then taken to allow anything).
 */
function expand(root: JSONSchema, nodes: JSONSchema[], budget: { left: number }): JSONSchema[] | null {
  const out: JSONSchema[] = [];
  const queue = [...nodes];
  while (queue.length) {
    if (--budget.left < 0) return null;
    const node = queue.shift()!;
    out.push(node);
    for (const k of ["anyOf", "oneOf", "allOf"]) if (Array.isArray(node[k])) queue.push(...(node[k] as unknown[]).filter(isMapping));
    const ref = typeof node.$ref === "string" ? /^#\/(\$defs|definitions)\/([^/]+)$/.exec(node.$ref) : null;
    const defs = ref ? root[ref[1]!] : undefined;
    if (ref && isMapping(defs) && Object.hasOwn(defs, ref[2]!) && isMapping(defs[ref[2]!])) queue.push(defs[ref[2]!] as JSONSchema);
  }
  return out;
}

/** What the schema says of the value at `segments`: a leaf, a problem, or null when the schema allows anything there. */
function leafAt(root: JSONSchema, segments: string[]): Leaf | string | null {
  const budget = { left: MAX_NODES };
  let nodes = expand(root, [root], budget);
  let where = "";
  for (const segment of segments) {
    if (!nodes) return null;
    const next: JSONSchema[] = [];
    const fields = new Set<string>();
    let open = false;
    let object = false;
    for (const node of nodes) {
      const types = typesOf(node);
      if (isWrapper(node) || (types && !types.has("object"))) continue;
      object = true;
      const properties = isMapping(node.properties) ? node.properties : undefined;
      if (properties && Object.hasOwn(properties, segment) && isMapping(properties[segment])) next.push(properties[segment] as JSONSchema);
      else if (!properties || (node.additionalProperties !== undefined && node.additionalProperties !== false) || node.patternProperties !== undefined)
        open = true;
      for (const name of Object.keys(properties ?? {})) fields.add(name);
    }
    const here = where || "the tool's input";
    if (!object) return `${here} is ${typesText(nodes)} in the tool's input: a path cannot go below it`;
    // Some alternative takes any field here: nothing more to check.
    if (open) return null;
    if (!next.length) return `no field "${segment}" in ${here}; its fields: ${[...fields].join(", ") || "(none)"}`;
    nodes = expand(root, next, budget);
    where = where ? `${where}.${segment}` : segment;
  }
  if (!nodes) return null;
  const leaf: Leaf = { types: new Set(), values: [] };
  for (const node of nodes) {
    if (isWrapper(node)) continue;
    const types = typesOf(node);
    if (!types) leaf.types = undefined;
    else for (const t of types) leaf.types?.add(t);
    const values = valuesOf(node);
    if (!values) leaf.values = undefined;
    else leaf.values?.push(...values);
  }
  return leaf;
}

const typesText = (nodes: JSONSchema[]) => {
  const types = new Set(nodes.flatMap((n) => [...(typesOf(n) ?? [])]));
  return [...types].map((t) => (t === "array" ? "a list" : t === "object" ? "an object" : t === "null" ? "null" : `a ${t}`)).join(" or ") || "a value";
};
const leafText = (leaf: Leaf) => typesText([{ type: [...(leaf.types ?? [])] }]);
const SCALARS = ["string", "number", "boolean", "null"];

/** Why `test` cannot match the field `leaf` describes, or undefined. */
function testProblem(path: string, test: FieldTest, leaf: Leaf): string | undefined {
  const { types, values } = leaf;
  if (types && ![...types].some((t) => SCALARS.includes(t)))
    return `${path} is ${leafText(leaf)} in the tool's input; a rule compares strings, numbers, booleans or null`;
  if (!test.in) {
    return types && !types.has("number") ? `${path} is ${leafText(leaf)} in the tool's input; gt, gte, lt and lte compare numbers` : undefined;
  }
  for (const v of test.in) {
    if (types && !types.has(jsonType(v)))
      return `${JSON.stringify(v)} is ${jsonType(v) === "null" ? "null" : `a ${jsonType(v)}`}; ${path} is ${leafText(leaf)} in the tool's input`;
    if (values && !values.includes(v)) {
      const shown = values.slice(0, SHOWN_VALUES).map((x) => JSON.stringify(x));
      return `${JSON.stringify(v)} is not a value ${path} takes: ${shown.join(", ")}${values.length > SHOWN_VALUES ? ", …" : ""}`;
    }
  }
  return undefined;
}
