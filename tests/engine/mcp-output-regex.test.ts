import { describe, expect, it } from "vitest";
import { BoundedOutputValidator } from "../../src/engine/mcp/output-validator";

/**
 * Review of issue 19 item 6: the MCP output check skips `pattern` and `format` only
 * when their value is not an object (so a property merely named "pattern" stays). An
 * array is an object: `pattern: ["^(a+)+$"]` is kept, and @cfworker/json-schema runs
 * `new RegExp(["^(a+)+$"], "u")`, i.e. the backtracking regex, on the server's
 * string; `format: ["url"]` likewise reaches its backtracking URL regex, and
 * `uniqueItems: {}` (truthy) the validator's pairwise walk of the array.
 */
describe("review: an MCP outputSchema's array-valued pattern or format, object-valued uniqueItems", () => {
  const timed = (schema: Record<string, unknown>, value: unknown) => {
    const validate = new BoundedOutputValidator(() => 4_000).getValidator(schema as never);
    const t0 = performance.now();
    validate(value);
    return performance.now() - t0;
  };

  it("a backtracking pattern written as an array is skipped like a string one (validation stays fast)", () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: ["^(a+)+$"] } } };
    // Control: the same regex as a string is skipped.
    expect(timed({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } }, { s: `${"a".repeat(27)}!` })).toBeLessThan(200);
    expect(timed(schema, { s: `${"a".repeat(27)}!` })).toBeLessThan(200);
  });

  it("a format written as an array is skipped like a string one (validation stays fast)", () => {
    const schema = { type: "object", properties: { s: { type: "string", format: ["url"] } } };
    expect(timed(schema, { s: `http://${"a".repeat(30)}_` })).toBeLessThan(200);
  });

  it("uniqueItems written as an object (truthy to the validator) is skipped like uniqueItems: true (no pairwise walk)", () => {
    const schema = { type: "object", properties: { a: { type: "array", uniqueItems: {} } } };
    const a = Array.from({ length: 40_000 }, (_, i) => i);
    expect(timed(schema, { a })).toBeLessThan(200);
  });

  it("a property named pattern is still checked, and data (const) keeps its keys", () => {
    const validate = new BoundedOutputValidator(() => 4_000).getValidator({
      type: "object",
      properties: { pattern: { type: "number" }, c: { const: { pattern: "x", format: "y" } } },
    } as never);
    expect(validate({ pattern: "not a number" })).toMatchObject({ valid: false });
    expect(validate({ pattern: 1, c: { pattern: "x", format: "y" } })).toMatchObject({ valid: true });
    expect(validate({ c: {} })).toMatchObject({ valid: false });
  });
});
