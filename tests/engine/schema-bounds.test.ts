import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { validatorFor } from "../../src/engine/json-schema";
import { BoundedOutputValidator, CHECKS_PER_MS } from "../../src/engine/mcp/output-validator";
import { MAX_VALIDATION_CHECKS, SCHEMA_BOUNDS, schemaBoundsProblem, validationWorkProblem } from "../../src/engine/schema-bounds";

/** A schema at the bounds: an `anyOf` under `items` whose every branch but the last fails on a number, each value tried against all. */
function atTheBounds(): Record<string, unknown> {
  const branches: unknown[] = [];
  const schema = { type: "object", properties: { a: { type: "array", items: { anyOf: branches } } } };
  while (!schemaBoundsProblem(schema)) branches.push({ type: "string", minLength: branches.length });
  branches.pop();
  branches[branches.length - 1] = { type: "number" };
  return schema;
}

/** Wall time of `f` (Node's clock in the pool advances across synchronous work only at I/O; performance.now as well). */
async function timed(f: () => unknown): Promise<number> {
  const t = Date.now();
  f();
  await new Promise((r) => setTimeout(r, 0));
  return Date.now() - t;
}

describe("untrusted JSON Schemas", () => {
  it("are bounded in characters, depth and JSON values with $refs followed", () => {
    expect(schemaBoundsProblem({ description: "x".repeat(SCHEMA_BOUNDS.chars) })).toMatch(/characters of JSON \(at most 20000\)/);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { items: deep };
    expect(schemaBoundsProblem(deep)).toBe("nests deeper than 32 levels");
    expect(schemaBoundsProblem({ $dynamicRef: "#x" })).toMatch(/uses \$dynamicRef/);
    expect(schemaBoundsProblem({ $ref: "#/$defs/none" })).toMatch(/points at nothing/);
    expect(schemaBoundsProblem(atTheBounds())).toBeUndefined();
  });

  it("a value too large to check against a schema at the bounds is refused before any check; the worst accepted one is quick", async () => {
    const schema = atTheBounds();
    const size = Number(/against a schema of (\d+)/.exec(validationWorkProblem(schema, { a: Array(100_000).fill(1) })!)![1]);
    const worst = { a: Array(Math.floor(MAX_VALIDATION_CHECKS / size) - 3).fill(1) };
    expect(validationWorkProblem(schema, worst)).toBeUndefined();
    const tooBig = { a: Array(2 * worst.a.length).fill(1) };

    // Compiled first: what is timed is the check of one value.
    const validator = validatorFor(schema);
    const refused = await timed(() => expect(validator.safeParse(tooBig).error?.issues[0]?.message).toMatch(/^the value is too large to check/));
    const checked = await timed(() => expect(validator.safeParse(worst).success).toBe(true));
    const cfworker = await timed(() => expect(new Validator(schema as never, "2020-12", true).validate(worst).valid).toBe(true));
    console.log(JSON.stringify({ schemaValues: size, values: worst.a.length + 2, validatorForMs: checked, cfworkerMs: cfworker, refusedMs: refused }));
    expect(refused).toBeLessThan(200);
    expect(checked).toBeLessThan(2_000);
    expect(cfworker).toBeLessThan(MAX_VALIDATION_CHECKS / CHECKS_PER_MS);
  });

  it("an MCP output check skips pattern, format and patternProperties, and refuses what would not fit the time left", async () => {
    const validate = new BoundedOutputValidator(() => 10_000).getValidator({
      type: "object",
      // uniqueItems compares pairwise: quadratic in the array's length.
      properties: { s: { type: "string", pattern: "^(a+)+$" }, e: { type: "string", format: "email" }, u: { type: "array", uniqueItems: true } },
      patternProperties: { "^(x+)+$": { type: "number" } },
      additionalProperties: false,
    });
    const hostile = { s: `${"a".repeat(40)}!`, e: "not an email", [`${"x".repeat(40)}!`]: "n", u: [1, 1] };
    expect(await timed(() => expect(validate(hostile)).toMatchObject({ valid: true }))).toBeLessThan(200);
    expect(validate({ s: 1 })).toMatchObject({ valid: false, errorMessage: expect.stringContaining("/s") });

    const late = new BoundedOutputValidator(() => 1).getValidator({ type: "object", properties: { a: { type: "array", items: { type: "number" } } } });
    expect(late({ a: Array(1_000).fill(1) })).toMatchObject({
      valid: false,
      errorMessage: expect.stringMatching(/^the structured content is too large to check: .* in what is left of timeout_ms$/),
    });
  });
});
