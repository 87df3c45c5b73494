/**
 * Approval rules on a call's arguments, as a worker file writes them in `approval:`:
 *
 *   http_fetch: { ask_when: { method: [POST, PUT, PATCH, DELETE] }, otherwise: allow }
 *   payments_refund: { ask_when: { amount: { gt: 100 } }, otherwise: allow, ask: [finance@example.com] }
 *   files_write_file: { deny_when: { path: /etc/passwd }, otherwise: ask }
 *
 * A small matcher with no code in it: a condition maps field paths (property names
 * joined by ".", `body.amount`) to tests and holds when every test holds; `deny_when`
 * and `ask_when` are one condition or a list of them (any may hold). A test is a value
 * (equal to it), a list of values (any of them) or `{eq | in | gt | gte | lt | lte}`.
 * Every dimension is bounded (`RULE_BOUNDS`) and checked when the catalog loads. No
 * pattern is ever built from a rule or a value: comparisons are `===` and `<`.
 *
 * A value the matcher cannot compare — absent, of another type than the test's,
 * below something that is not an object — fails closed: its test counts as holding
 * (`deny_when` denies, `ask_when` asks), with the reason beside the rule.
 */
import type { ArgRules, Condition, FieldTest, RuleScalar } from "../types/arg-rules";
import type { Policy } from "../types/toolset";

/** The keys of a tool's `approval:` mapping that make rules (the others say who decides). */
export const RULE_KEYS = ["deny_when", "ask_when", "otherwise"] as const;

export const RULE_BOUNDS = {
  /** Conditions in one `*_when` list. */
  alternatives: 8,
  /** Fields in one condition. */
  fields: 8,
  /** Field tests in one tool's policy, both lists together. */
  tests: 32,
  /** Segments of a field path. */
  depth: 8,
  /** Characters of one path segment. */
  segment: 64,
  /** Values in one list. */
  values: 32,
  /** Characters of one string value. */
  chars: 256,
  /** Characters of the whole policy as JSON. */
  total: 4096,
} as const;

/** A problem of a written policy: `field` below the tool's entry (`ask_when.amount`), and why. */
export interface RuleProblem {
  field: string;
  reason: string;
}

const SEGMENT = /^[A-Za-z0-9_$@-]+$/;
const COMPARISONS = ["gt", "gte", "lt", "lte"] as const;
const TESTS = ["eq", "in", ...COMPARISONS] as const;
const POLICIES: readonly string[] = ["allow", "ask", "deny"];

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is RuleScalar => v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
const field = (...parts: Array<string | number>) => parts.join(".");

/** The rule keys of one tool's entry, read and bounded; the problems instead when any. */
export function readArgRules(raw: { deny_when?: unknown; ask_when?: unknown; otherwise?: unknown }): ArgRules | RuleProblem[] {
  const problems: RuleProblem[] = [];
  const rules: Partial<ArgRules> = {};
  let tests = 0;
  for (const when of ["deny_when", "ask_when"] as const) {
    if (raw[when] === undefined) continue;
    const list = Array.isArray(raw[when]) ? raw[when] : [raw[when]];
    if (!list.length || list.length > RULE_BOUNDS.alternatives) {
      problems.push({ field: when, reason: `one condition, or a list of 1 to ${RULE_BOUNDS.alternatives} (any of them)` });
      continue;
    }
    rules[when] = list.map((c, i) => readCondition(Array.isArray(raw[when]) ? field(when, i) : when, c, problems));
    tests += rules[when].reduce((n, c) => n + Object.keys(c).length, 0);
  }
  if (raw.otherwise === undefined) {
    problems.push({ field: "otherwise", reason: "required beside ask_when and deny_when: allow, ask or deny, for calls no rule matches" });
  } else if (typeof raw.otherwise !== "string" || !POLICIES.includes(raw.otherwise)) {
    problems.push({ field: "otherwise", reason: `must be allow, ask or deny (got ${JSON.stringify(raw.otherwise)})` });
  } else rules.otherwise = raw.otherwise as Policy;
  if (raw.ask_when === undefined && raw.deny_when === undefined)
    problems.push({ field: "otherwise", reason: "needs ask_when or deny_when; without rules write the policy itself (allow, ask or deny)" });
  if (raw.ask_when !== undefined && rules.otherwise === "ask")
    problems.push({ field: "otherwise", reason: "ask_when with otherwise: ask asks for every call; write otherwise: allow or deny" });
  if (raw.deny_when !== undefined && rules.otherwise === "deny")
    problems.push({ field: "otherwise", reason: "deny_when with otherwise: deny denies every call; write otherwise: allow or ask" });
  if (tests > RULE_BOUNDS.tests) problems.push({ field: "ask_when", reason: `${tests} field tests, over ${RULE_BOUNDS.tests} per tool` });
  if (problems.length) return problems;
  const size = JSON.stringify(rules).length;
  if (size > RULE_BOUNDS.total)
    return [{ field: "ask_when", reason: `${size} characters as JSON, over ${RULE_BOUNDS.total} per tool: write fewer or shorter values` }];
  return rules as ArgRules;
}

function readCondition(at: string, raw: unknown, problems: RuleProblem[]): Condition {
  if (!isMapping(raw) || !Object.keys(raw).length) {
    problems.push({ field: at, reason: "a condition maps field paths to tests, e.g. { method: [POST, PUT] } or { amount: { gt: 100 } }" });
    return {};
  }
  const entries = Object.entries(raw);
  if (entries.length > RULE_BOUNDS.fields) problems.push({ field: at, reason: `${entries.length} fields, over ${RULE_BOUNDS.fields} per condition` });
  return Object.fromEntries(entries.map(([path, test]) => [path, readTest(field(at, path), path, test, problems)]));
}

/** Why `path` is not a field path, or undefined. */
function pathProblem(path: string): string | undefined {
  const segments = path.split(".");
  if (segments.length > RULE_BOUNDS.depth) return `too deep: ${segments.length} levels, at most ${RULE_BOUNDS.depth}`;
  const bad = segments.find((s) => !s || s.length > RULE_BOUNDS.segment || !SEGMENT.test(s));
  if (bad !== undefined) return `a field path is property names (1-${RULE_BOUNDS.segment} of a-z A-Z 0-9 _ $ @ -) joined by ".", e.g. body.amount`;
  return undefined;
}

function readTest(at: string, path: string, raw: unknown, problems: RuleProblem[]): FieldTest {
  const problem = (reason: string): FieldTest => {
    problems.push({ field: at, reason });
    return {};
  };
  const badPath = pathProblem(path);
  if (badPath) return problem(badPath);
  if (!isMapping(raw)) return { in: readValues(at, raw, problems) };
  const keys = Object.keys(raw);
  const unknown = keys.filter((k) => !(TESTS as readonly string[]).includes(k));
  if (unknown.length || !keys.length) return problem(`unknown test ${unknown.join(", ") || "(none)"}; the tests are ${TESTS.join(", ")}`);
  const compares = COMPARISONS.filter((k) => k in raw);
  if ("eq" in raw && "in" in raw) return problem("give eq or in, not both");
  if (Array.isArray(raw.eq)) return problem("eq compares one value; in takes a list");
  if (compares.length && ("eq" in raw || "in" in raw)) return problem("eq and in compare values; gt, gte, lt, lte bound a number: use one kind");
  if (!compares.length) return { in: readValues(field(at, "eq" in raw ? "eq" : "in"), "eq" in raw ? raw.eq : raw.in, problems) };
  const test: FieldTest = {};
  for (const k of compares) {
    const n = raw[k];
    if (typeof n !== "number" || !Number.isFinite(n)) return problem(`${k} compares numbers: give a finite number (got ${JSON.stringify(n) ?? String(n)})`);
    test[k] = n;
  }
  const low = test.gt ?? test.gte;
  const high = test.lt ?? test.lte;
  if (low !== undefined && high !== undefined && (low > high || (low === high && (test.gt !== undefined || test.lt !== undefined))))
    return problem("no number is in this range");
  return test;
}

/** A written value or list of values (any of them). */
function readValues(at: string, raw: unknown, problems: RuleProblem[]): RuleScalar[] {
  const values = Array.isArray(raw) ? raw : [raw];
  if (!values.length || values.length > RULE_BOUNDS.values) {
    problems.push({ field: at, reason: `a value or a list of 1 to ${RULE_BOUNDS.values} values` });
    return [];
  }
  for (const v of values) {
    if (!isScalar(v) || (typeof v === "number" && !Number.isFinite(v))) {
      problems.push({ field: at, reason: "values are strings, finite numbers, true, false or null (a test compares one value, never a list or an object)" });
      return [];
    }
    if (typeof v === "string" && v.length > RULE_BOUNDS.chars) {
      problems.push({ field: at, reason: `a value of ${v.length} characters, over ${RULE_BOUNDS.chars}` });
      return [];
    }
  }
  return values as RuleScalar[];
}

/** What the rules make of one call: its policy and the rule that chose it (`ask_when amount > 100`); `unsure`: why it failed closed. */
export interface RuleVerdict {
  policy: Policy;
  rule: string;
  unsure?: string;
}

/** A test's outcome: holds, does not, or a reason it could not be compared (which counts as holding). */
type Truth = boolean | string;

/**
 * The verdict of `rules` on `args` (the arguments as the tool reads them). Never
 * throws: whatever cannot be read fails closed. `unreadable`: the arguments could not
 * be read at all (every condition then fails closed, for that reason).
 */
export function evaluateRules(rules: ArgRules, args: unknown, unreadable?: string): RuleVerdict {
  for (const when of ["deny_when", "ask_when"] as const) {
    const conditions = rules[when];
    if (!conditions) continue;
    const truths = conditions.map((c) => (unreadable === undefined ? conditionTruth(c, args) : unreadable));
    // A condition that holds names the rule before one that could not be compared.
    let i = truths.indexOf(true);
    if (i < 0) i = truths.findIndex((t) => typeof t === "string");
    if (i >= 0) {
      const t = truths[i]!;
      return { policy: when === "deny_when" ? "deny" : "ask", rule: ruleText(when, conditions[i]!), ...(typeof t === "string" ? { unsure: t } : {}) };
    }
  }
  return { policy: rules.otherwise, rule: `otherwise: ${rules.otherwise}` };
}

function conditionTruth(condition: Condition, args: unknown): Truth {
  let unsure: string | undefined;
  for (const [path, test] of Object.entries(condition)) {
    let t: Truth;
    try {
      t = testTruth(path, test, args);
    } catch {
      t = `${path} could not be read`;
    }
    // Any test that does not hold decides; one that could not be compared only if none does.
    if (t === false) return false;
    if (t !== true) unsure ??= t;
  }
  return unsure ?? true;
}

/** The value at `path` (own properties of plain objects only: never a prototype's), or why there is none. */
function valueAt(args: unknown, path: string): { value: unknown } | string {
  let at: unknown = args;
  let walked = "the arguments";
  for (const segment of path.split(".")) {
    if (!isMapping(at)) return `${walked} is not an object`;
    if (!Object.hasOwn(at, segment) || at[segment] === undefined) return `${path} is absent`;
    at = at[segment];
    walked = walked === "the arguments" ? segment : `${walked}.${segment}`;
  }
  return { value: at };
}

const typeName = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`);

function testTruth(path: string, test: FieldTest, args: unknown): Truth {
  const found = valueAt(args, path);
  if (typeof found === "string") return found;
  const v = found.value;
  if (test.in) {
    if (!isScalar(v)) return `${path} is ${typeName(v)}`;
    // A value of a type no listed value has is not "another value": the tool may read it as one of them.
    if (!test.in.some((x) => typeName(x) === typeName(v))) return `${path} is ${typeName(v)}, not ${[...new Set(test.in.map(typeName))].join(" or ")}`;
    return test.in.includes(v);
  }
  if (typeof v !== "number" || !Number.isFinite(v)) return `${path} is ${typeName(v)}, not a number`;
  return (
    (test.gt === undefined || v > test.gt) &&
    (test.gte === undefined || v >= test.gte) &&
    (test.lt === undefined || v < test.lt) &&
    (test.lte === undefined || v <= test.lte)
  );
}

const SYMBOLS = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** A rule as people read it and as a remembered approval names it: `ask_when method in ["POST","PUT"] and amount > 100`. */
export function ruleText(when: "deny_when" | "ask_when", condition: Condition): string {
  const tests = Object.entries(condition).map(([path, t]) => {
    if (t.in) return t.in.length === 1 ? `${path} = ${JSON.stringify(t.in[0])}` : `${path} in ${JSON.stringify(t.in)}`;
    return COMPARISONS.filter((k) => t[k] !== undefined)
      .map((k) => `${path} ${SYMBOLS[k]} ${t[k]}`)
      .join(" and ");
  });
  return `${when} ${tests.join(" and ")}`;
}
