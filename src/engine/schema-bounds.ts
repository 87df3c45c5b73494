/**
 * What a JSON Schema we did not write (a created worker's, an MCP server's) may cost.
 * `expanded` counts every JSON value in the schema (subschemas, `enum` entries…) with
 * each `$ref` replaced by what it points to: a validator's work on one value grows
 * with that number (an `anyOf` of `$ref`s to `anyOf`s of `$ref`s doubles it per level
 * while the JSON grows by a line), so bounding it bounds the work per value checked.
 */
export const SCHEMA_BOUNDS = { chars: 20_000, depth: 32, expanded: 4_000 } as const;

/** Why `schema` is over the bounds (a sentence naming the bound), or undefined when it is within them. */
export function schemaBoundsProblem(schema: unknown): string | undefined {
  const chars = (JSON.stringify(schema) ?? "").length;
  if (chars > SCHEMA_BOUNDS.chars) return `is ${chars} characters of JSON (at most ${SCHEMA_BOUNDS.chars})`;
  if (depthOf(schema, 0) > SCHEMA_BOUNDS.depth) return `nests deeper than ${SCHEMA_BOUNDS.depth} levels`;
  try {
    const n = new Expansion(schema).size(schema);
    return n > SCHEMA_BOUNDS.expanded ? `expands to more than ${SCHEMA_BOUNDS.expanded} JSON values with its $refs followed` : undefined;
  } catch (err) {
    if (err instanceof RefProblem) return err.message;
    throw err;
  }
}

/** Depth of nested objects and arrays; stops counting once past the bound. */
function depthOf(v: unknown, depth: number): number {
  if (typeof v !== "object" || v === null || depth > SCHEMA_BOUNDS.depth) return depth;
  let max = depth + 1;
  for (const x of Object.values(v)) max = Math.max(max, depthOf(x, depth + 1));
  return max;
}

class RefProblem extends Error {}

/** Sizes with `$ref`s expanded, each target sized once; stops adding once past the bound. */
class Expansion {
  private readonly sized = new Map<string, number>();
  private readonly open = new Set<string>();

  constructor(private readonly root: unknown) {}

  size(v: unknown): number {
    if (typeof v !== "object" || v === null) return 1;
    let n = 1;
    for (const [k, x] of Object.entries(v)) {
      if (k === "$dynamicRef" || k === "$recursiveRef") throw new RefProblem(`uses ${k}, which is not supported here`);
      n += k === "$ref" && typeof x === "string" && !Array.isArray(v) ? this.refSize(x) : this.size(x);
      if (n > SCHEMA_BOUNDS.expanded) return n;
    }
    return n;
  }

  private refSize(ref: string): number {
    const known = this.sized.get(ref);
    if (known !== undefined) return known;
    // A cycle would expand forever (and a validator may follow it without consuming the value).
    if (this.open.has(ref)) throw new RefProblem(`has a recursive $ref ("${ref.slice(0, 100)}"), which is not supported here`);
    this.open.add(ref);
    const n = this.size(this.target(ref));
    this.open.delete(ref);
    this.sized.set(ref, n);
    return n;
  }

  /** A local JSON pointer (`#`, `#/$defs/x`); anything else is refused rather than fetched or guessed. */
  private target(ref: string): unknown {
    if (ref !== "#" && !ref.startsWith("#/")) throw new RefProblem(`has $ref "${ref.slice(0, 100)}"; only local references (#/…) are supported here`);
    let at: unknown = this.root;
    for (const raw of ref
      .slice(2)
      .split("/")
      .filter((s, _i, all) => !(all.length === 1 && s === ""))) {
      const name = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      if (typeof at !== "object" || at === null || !Object.hasOwn(at, name)) throw new RefProblem(`has $ref "${ref.slice(0, 100)}", which points at nothing`);
      at = (at as Record<string, unknown>)[name];
    }
    return at;
  }
}

/**
 * Checks (schema value × instance value) one validation may make. Measured in the test
 * pool with a schema at the bounds (an `anyOf` of ~600 branches under `items`, tests/
 * engine/schema-bounds.test.ts): ~0.45 s with @cfworker/json-schema (which validatorFor uses;
 * zod's JSON Schema converter, used before, took ~0.6 s).
 */
export const MAX_VALIDATION_CHECKS = 1_000_000;

const expandedSizes = new WeakMap<object, number | null>();

/** JSON values with `$ref`s followed (capped just past the bound); null for a recursive schema, which only a catalog's own files may have. */
function expandedSize(schema: object): number | null {
  let n = expandedSizes.get(schema);
  if (n === undefined) {
    try {
      n = new Expansion(schema).size(schema);
    } catch (err) {
      if (!(err instanceof RefProblem)) throw err;
      n = null;
    }
    expandedSizes.set(schema, n);
  }
  return n;
}

/**
 * Values (objects, arrays, scalars) in `v`, a string counting once more per 100
 * characters (a length check reads it all); counting stops once past `limit`.
 */
function valueCount(v: unknown, limit: number): number {
  const stack: unknown[] = [v];
  let n = 0;
  while (stack.length && n <= limit) {
    const x = stack.pop();
    n += typeof x === "string" ? 1 + Math.floor(x.length / 100) : 1;
    if (typeof x === "object" && x !== null) for (const y of Object.values(x)) stack.push(y);
  }
  return n;
}

/** What comparing every pair of items of every array in `v` reads: per array, its items × its values; stops once past `limit`. */
function pairWork(v: unknown, limit: number): number {
  const stack: unknown[] = [v];
  let n = 0;
  while (stack.length && n <= limit) {
    const x = stack.pop();
    if (Array.isArray(x) && x.length > 1) n += x.length * valueCount(x, limit);
    if (typeof x === "object" && x !== null) for (const y of Object.values(x)) stack.push(y);
  }
  return n;
}

/**
 * Why checking `value` against `schema` would take more than `maxChecks` (each of its
 * values against each subschema, at worst), or undefined. The sentence names the bound.
 * `pairwise`: the schema has `uniqueItems`, which the validator checks by comparing every
 * pair of an array's items.
 */
export function validationWorkProblem(schema: unknown, value: unknown, maxChecks = MAX_VALIDATION_CHECKS, pairwise = false): string | undefined {
  const size = typeof schema === "object" && schema !== null ? expandedSize(schema) : 1;
  if (size === null) return undefined;
  const limit = Math.floor(maxChecks / size);
  const count = valueCount(value, limit);
  if (count > limit) return `is too large to check: more than ${limit} values against a schema of ${size} is over ${maxChecks} checks`;
  return pairwise && pairWork(value, maxChecks) > maxChecks
    ? `is too large to check for uniqueItems: comparing each pair of an array's items is over ${maxChecks} checks`
    : undefined;
}

const BESIDE_PATTERN_PROPERTIES = new Set(["patternProperties", "additionalProperties", "unevaluatedProperties"]);
/** Keywords whose value maps names to schemas: a name there ("pattern") is data, its schema is walked. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas", "dependencies"]);
/** Keywords whose value is instance data, never a schema: left as written (a `const` must stay what it was). */
const DATA = new Set(["const", "enum", "default", "examples"]);

/**
 * The schema without the keywords `skipped` (whatever their value: the validator makes a
 * RegExp of an array `pattern` and walks pairwise for any truthy `uniqueItems`), and
 * without `patternProperties` (regexes of the schema's, run on the value's names) and the
 * `additionalProperties`/`unevaluatedProperties` beside it (which would otherwise refuse
 * the properties it matched). Keywords are told from names by position (a property
 * named "pattern" stays). Skipping only makes a check more lenient.
 */
export function withoutKeywords(v: unknown, skipped: ReadonlySet<string>): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) return v.map((x) => withoutKeywords(x, skipped));
  const o = v as Record<string, unknown>;
  const hasPatternProperties = typeof o.patternProperties === "object" && o.patternProperties !== null;
  const walk = (x: unknown) => withoutKeywords(x, skipped);
  return Object.fromEntries(
    Object.entries(o)
      .filter(([k]) => !skipped.has(k) && !(hasPatternProperties && BESIDE_PATTERN_PROPERTIES.has(k)))
      .map(([k, x]) => [k, DATA.has(k) ? x : SCHEMA_MAPS.has(k) && isNameMap(x) ? mapValues(x, walk) : walk(x)]),
  );
}

const isNameMap = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const mapValues = (x: Record<string, unknown>, f: (v: unknown) => unknown) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, f(v)]));
