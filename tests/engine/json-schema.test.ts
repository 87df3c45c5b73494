import { describe, expect, it } from "vitest";
import { describeIssues, validatorFor } from "../../src/engine/json-schema";

const problem = (schema: Record<string, unknown>, value: unknown) => {
  const checked = validatorFor(schema).safeParse(value);
  return checked.success ? undefined : describeIssues(checked.error);
};

const unreadable = (schema: Record<string, unknown>) => {
  try {
    validatorFor(schema);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

describe("validatorFor (JSON Schema, @cfworker/json-schema)", () => {
  const issue = {
    type: "object",
    properties: {
      label: { enum: ["bug", "docs"] },
      meta: { type: "object", properties: { "a/b": { type: "integer", minimum: 1 } }, required: ["by"] },
      pick: { anyOf: [{ type: "string" }, { type: "number" }] },
    },
    required: ["label"],
    additionalProperties: false,
  };

  it("says path: message, a missing property at its own path, an unknown one as not allowed", () => {
    expect(problem(issue, { label: "bug" })).toBeUndefined();
    expect(problem(issue, {})).toBe("label: required");
    expect(problem(issue, { label: "x" })).toBe('label: Instance does not match any of ["bug","docs"]');
    expect(problem(issue, { label: "bug", meta: { by: "me", "a/b": 0 } })).toBe("meta.a/b: 0 is less than 1");
    expect(problem(issue, { label: "bug", meta: {} })).toBe("meta.by: required");
    expect(problem(issue, { label: "bug", colour: "blue" })).toBe("colour: not allowed");
    // Only the anyOf is told, not why each branch failed.
    expect(problem(issue, { label: "bug", pick: true })).toBe("pick: Instance does not match any subschemas");
  });

  it("passes the value on as sent (a default is an annotation)", () => {
    const value = { label: "bug" };
    expect(validatorFor({ ...issue, properties: { ...issue.properties, n: { type: "number", default: 1 } } }).safeParse(value)).toEqual({
      success: true,
      data: value,
    });
  });

  it("refuses, when compiled, a schema it cannot read, naming where", () => {
    expect(unreadable({ type: "object", properties: { n: { type: "count" } } })).toMatch(/^properties\.n\.type: /);
    expect(unreadable({ type: "object", properties: { s: { type: "string", pattern: "(" } } })).toMatch(/^properties\.s\.pattern: .*regex/);
    expect(unreadable({ type: "object", required: "a" })).toMatch(/^required: Instance type "string" is invalid/);
    expect(unreadable({ type: "object", properties: { n: { $ref: "#/$defs/n" } } })).toBe('$ref "#/$defs/n" points at nothing');
    expect(unreadable({ type: "object", properties: { n: { $ref: "#/$defs/n" } }, $defs: { n: { type: "number" } } })).toBeUndefined();
  });

  it("checks uri formats with the URL parser: a long hostile string is quick", () => {
    const url = { type: "object", properties: { u: { type: "string", format: "url" }, r: { type: "string", format: "uri" } } };
    expect(problem(url, { r: "https://example.com/a?b=c" })).toBeUndefined();
    expect(problem(url, { r: "not a uri" })).toBe('r: String does not match format "uri"');
    // The validator's own url regex backtracks exponentially on this.
    const started = Date.now();
    expect(problem(url, { u: `${"a".repeat(50_000)}!` })).toBe('u: String does not match format "url"');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("refuses arrays too long to compare pairwise for uniqueItems, before comparing; reports a duplicate", () => {
    const tags = { type: "object", properties: { tags: { type: "array", uniqueItems: true } } };
    expect(problem(tags, { tags: [1, 2, 1] })).toBe("tags: Duplicate items at indexes 0 and 2");
    expect(problem(tags, { tags: Array.from({ length: 500 }, (_, i) => i) })).toBeUndefined();
    expect(problem(tags, { tags: Array.from({ length: 5_000 }, (_, i) => i) })).toMatch(/^\(root\): the value is too large to check for uniqueItems/);
  });

  it("answers a value nested too deep to check with an issue, not a throw", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const nested = { $defs: { t: { type: ["array", "number"], items: { $ref: "#/$defs/t" } } }, $ref: "#/$defs/t" };
    expect(problem(nested, deep)).toMatch(/^\(root\): the value could not be checked: /);
  });
});
