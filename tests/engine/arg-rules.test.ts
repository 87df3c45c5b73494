import { describe, expect, it } from "vitest";
import { evaluateRules, readArgRules, RULE_BOUNDS, type RuleProblem } from "../../src/engine/approvals/arg-rules";
import type { ArgRules } from "../../src/engine/types/arg-rules";

const POST = "POST";

const read = (raw: Record<string, unknown>): ArgRules => {
  const r = readArgRules(raw);
  if (Array.isArray(r)) throw new Error(JSON.stringify(r));
  return r;
};
const problems = (raw: Record<string, unknown>): RuleProblem[] => {
  const r = readArgRules(raw);
  if (!Array.isArray(r)) throw new Error(`accepted: ${JSON.stringify(r)}`);
  return r;
};

describe("approval rules: reading", () => {
  it("normalizes a value, a list and eq to `in`, and one condition to a list of one", () => {
    expect(read({ ask_when: { method: [POST, "PUT"] }, otherwise: "allow" })).toEqual({ ask_when: [{ method: { in: ["POST", "PUT"] } }], otherwise: "allow" });
    expect(read({ deny_when: [{ "body.path": "/etc" }, { force: { eq: true } }], otherwise: "ask" })).toEqual({
      deny_when: [{ "body.path": { in: ["/etc"] } }, { force: { in: [true] } }],
      otherwise: "ask",
    });
    expect(read({ ask_when: { amount: { gt: 100, lte: 1000 } }, otherwise: "allow" })).toEqual({
      ask_when: [{ amount: { gt: 100, lte: 1000 } }],
      otherwise: "allow",
    });
    // Normalized rules read back the same (a created worker's definition copies them).
    const rules = read({ ask_when: [{ a: 1 }, { b: { lt: 0 } }], deny_when: { c: null }, otherwise: "allow" });
    expect(read(rules as unknown as Record<string, unknown>)).toEqual(rules);
  });

  it("refuses what it cannot check, naming the field and the reason", () => {
    expect(problems({ ask_when: { method: [POST] } })).toEqual([{ field: "otherwise", reason: expect.stringContaining("required") }]);
    expect(problems({ otherwise: "allow" })).toEqual([{ field: "otherwise", reason: expect.stringContaining("needs ask_when or deny_when") }]);
    expect(problems({ ask_when: { a: 1 }, otherwise: "ask" })[0]!.reason).toContain("asks for every call");
    expect(problems({ deny_when: { a: 1 }, otherwise: "deny" })[0]!.reason).toContain("denies every call");
    expect(problems({ ask_when: { a: 1 }, otherwise: "maybe" })[0]).toEqual({ field: "otherwise", reason: 'must be allow, ask or deny (got "maybe")' });
    expect(problems({ ask_when: {}, otherwise: "allow" })[0]!.field).toBe("ask_when");
    expect(problems({ ask_when: "method", otherwise: "allow" })[0]!.field).toBe("ask_when");
    expect(problems({ ask_when: [], otherwise: "allow" })[0]!.field).toBe("ask_when");
    expect(problems({ ask_when: { amount: { gt: "100" } }, otherwise: "allow" })).toEqual([
      { field: "ask_when.amount", reason: 'gt compares numbers: give a finite number (got "100")' },
    ]);
    expect(problems({ ask_when: { amount: { gt: Number.POSITIVE_INFINITY } }, otherwise: "allow" })[0]!.field).toBe("ask_when.amount");
    expect(problems({ ask_when: { amount: { above: 1 } }, otherwise: "allow" })[0]!.reason).toContain("unknown test above");
    expect(problems({ ask_when: { amount: { gt: 10, lt: 5 } }, otherwise: "allow" })[0]!.reason).toBe("no number is in this range");
    expect(problems({ ask_when: { amount: { eq: 1, gt: 0 } }, otherwise: "allow" })[0]!.field).toBe("ask_when.amount");
    expect(problems({ ask_when: { amount: { eq: [1, 2] } }, otherwise: "allow" })[0]!.reason).toContain("in takes a list");
    expect(problems({ ask_when: { body: { a: 1 } }, otherwise: "allow" })[0]!.reason).toContain("unknown test a");
    expect(problems({ ask_when: { labels: [["x"]] }, otherwise: "allow" })[0]).toMatchObject({
      field: "ask_when.labels",
      reason: expect.stringContaining("values are"),
    });
    expect(problems({ ask_when: [{ a: 1 }, { "a..b": 1 }], otherwise: "allow" })[0]).toMatchObject({ field: "ask_when.1.a..b" });
    expect(problems({ ask_when: { "a b": 1 }, otherwise: "allow" })[0]!.reason).toContain("a field path is property names");
  });

  it("is bounded: path depth, segment length, values, string length, fields, conditions, tests, total size", () => {
    const deep = Array.from({ length: RULE_BOUNDS.depth + 1 }, (_, i) => `f${i}`).join(".");
    expect(problems({ ask_when: { [deep]: 1 }, otherwise: "allow" })).toEqual([{ field: `ask_when.${deep}`, reason: "too deep: 9 levels, at most 8" }]);
    expect(read({ ask_when: { [deep.split(".").slice(1).join(".")]: 1 }, otherwise: "allow" }).ask_when).toHaveLength(1);
    expect(problems({ ask_when: { ["x".repeat(65)]: 1 }, otherwise: "allow" })[0]!.reason).toContain("1-64");
    expect(problems({ ask_when: { m: Array.from({ length: 33 }, (_, i) => `v${i}`) }, otherwise: "allow" })[0]!.reason).toContain("1 to 32 values");
    expect(problems({ ask_when: { m: "x".repeat(257) }, otherwise: "allow" })[0]).toEqual({
      field: "ask_when.m",
      reason: "a value of 257 characters, over 256",
    });
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, 1]));
    expect(problems({ ask_when: nine, otherwise: "allow" })[0]!.reason).toContain("9 fields, over 8");
    expect(problems({ ask_when: Array.from({ length: 9 }, () => ({ a: 1 })), otherwise: "allow" })[0]!.reason).toContain("a list of 1 to 8");
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, 1]));
    expect(problems({ ask_when: [eight, eight, eight], deny_when: [eight, eight], otherwise: "allow" })[0]!.reason).toBe("40 field tests, over 32 per tool");
    const long = Array.from({ length: 30 }, (_, i) => `${i}`.padEnd(250, "x"));
    expect(problems({ ask_when: [{ a: long }], otherwise: "allow" })[0]!.reason).toMatch(/characters as JSON, over 4096 per tool/);
  });
});

const methods = read({ ask_when: { method: [POST, "PUT", "PATCH", "DELETE"] }, otherwise: "allow" });
const refunds = read({ ask_when: { amount: { gt: 100 } }, otherwise: "allow" });

describe("approval rules: evaluating", () => {
  it("GET is allowed and POST asks under ask_when {method: [POST, …]}; the verdict names the rule", () => {
    expect(evaluateRules(methods, { url: "https://x", method: "GET" })).toEqual({ policy: "allow", rule: "otherwise: allow" });
    expect(evaluateRules(methods, { url: "https://x", method: "POST" })).toEqual({
      policy: "ask",
      rule: 'ask_when method in ["POST","PUT","PATCH","DELETE"]',
    });
  });

  it("amount {gt: 100} asks at 150 and not at 50 (nor at 100)", () => {
    expect(evaluateRules(refunds, { amount: 150 })).toEqual({ policy: "ask", rule: "ask_when amount > 100" });
    expect(evaluateRules(refunds, { amount: 50 }).policy).toBe("allow");
    expect(evaluateRules(refunds, { amount: 100 }).policy).toBe("allow");
  });

  it("deny_when is checked first; conditions are all-of, lists any-of; nested paths read own properties only", () => {
    const rules = read({
      deny_when: { "target.env": "prod", "target.force": true },
      ask_when: [{ "target.env": ["staging", "prod"] }, { count: { gte: 10 } }],
      otherwise: "allow",
    });
    expect(evaluateRules(rules, { target: { env: "prod", force: true } })).toEqual({
      policy: "deny",
      rule: 'deny_when target.env = "prod" and target.force = true',
    });
    expect(evaluateRules(rules, { target: { env: "prod", force: false } })).toMatchObject({ policy: "ask", rule: 'ask_when target.env in ["staging","prod"]' });
    expect(evaluateRules(rules, { target: { env: "dev", force: false }, count: 10 })).toMatchObject({ policy: "ask", rule: "ask_when count >= 10" });
    expect(evaluateRules(rules, { target: { env: "dev", force: false }, count: 9 }).policy).toBe("allow");
    // A field a prototype has is not the argument's.
    const proto = read({ ask_when: { "toString.name": "toString" }, otherwise: "allow" });
    expect(evaluateRules(proto, {})).toMatchObject({ policy: "ask", unsure: "toString.name is absent" });
  });

  it("hostile values never throw and fail closed: the rule counts as matching, and says why", () => {
    const huge = "P".repeat(5_000_000);
    expect(evaluateRules(methods, { method: huge }).policy).toBe("allow"); // a string, compared exactly: not one of the listed
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = { method: deep };
    expect(evaluateRules(methods, deep)).toEqual({ policy: "ask", rule: 'ask_when method in ["POST","PUT","PATCH","DELETE"]', unsure: "method is an object" });
    expect(evaluateRules(refunds, { amount: "150" })).toMatchObject({ policy: "ask", unsure: "amount is a string, not a number" });
    expect(evaluateRules(refunds, { amount: [150] })).toMatchObject({ policy: "ask", unsure: "amount is a list, not a number" });
    expect(evaluateRules(refunds, { amount: null })).toMatchObject({ policy: "ask", unsure: "amount is null, not a number" });
    expect(evaluateRules(refunds, {})).toMatchObject({ policy: "ask", unsure: "amount is absent" });
    expect(evaluateRules(refunds, "150")).toMatchObject({ policy: "ask", unsure: "the arguments is not an object" });
    expect(evaluateRules(methods, { method: 5 })).toMatchObject({ policy: "ask", unsure: "method is a number, not a string" });
    expect(evaluateRules(read({ ask_when: { "a.b": 1 }, otherwise: "allow" }), { a: "text" })).toMatchObject({ policy: "ask", unsure: "a is not an object" });
    const throwing = Object.defineProperty({}, "amount", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    expect(evaluateRules(refunds, throwing)).toMatchObject({ policy: "ask", unsure: "amount could not be read" });
    expect(evaluateRules(refunds, { amount: 1 }, "the arguments could not be read")).toMatchObject({
      policy: "ask",
      unsure: "the arguments could not be read",
    });
    // deny_when fails closed too: denied.
    const deny = read({ deny_when: { amount: { gt: 1000 } }, otherwise: "allow" });
    expect(evaluateRules(deny, { amount: "lots" })).toMatchObject({
      policy: "deny",
      rule: "deny_when amount > 1000",
      unsure: "amount is a string, not a number",
    });
    // A test that does not hold decides, whatever another one could not compare.
    const both = read({ ask_when: { method: "POST", amount: { gt: 100 } }, otherwise: "allow" });
    expect(evaluateRules(both, { method: "GET", amount: "x" }).policy).toBe("allow");
    // A condition that holds names the rule before one that could not be compared.
    const two = read({ ask_when: [{ amount: { gt: 100 } }, { method: "POST" }], otherwise: "allow" });
    expect(evaluateRules(two, { method: "POST" })).toEqual({ policy: "ask", rule: 'ask_when method = "POST"' });
  });
});
