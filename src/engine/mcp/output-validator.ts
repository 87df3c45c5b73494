import { Validator, type Schema } from "@cfworker/json-schema";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { MAX_VALIDATION_CHECKS, schemaBoundsProblem, validationWorkProblem, withoutKeywords } from "../schema-bounds";

/**
 * Checks the validator makes per millisecond, at worst: @cfworker/json-schema made
 * ~800 (1.2 µs each) on a schema at the bounds; half that, to keep a margin.
 */
export const CHECKS_PER_MS = 400;

/**
 * Keywords skipped: a regex (`format`s are the validator's own, still run on hostile
 * strings), and `uniqueItems` (compared pairwise: quadratic in the array's length).
 * Skipping only makes the check more lenient; a server's own output checked against its
 * own schema is a courtesy, not a defence.
 */
const SKIPPED = new Set(["pattern", "format", "uniqueItems"]);

const invalid = (errorMessage: string) => ({ valid: false as const, data: undefined, errorMessage });

/**
 * The MCP client's validator of `structuredContent` against a tool's `outputSchema`
 * (both from the server): a schema over `SCHEMA_BOUNDS` is not compiled, regexes and
 * `uniqueItems` are skipped, and a value is checked only when the work fits what is left of the call's
 * `timeout_ms` (`remainingMs`) — validation is synchronous and cannot be interrupted.
 */
export class BoundedOutputValidator implements jsonSchemaValidator {
  constructor(private readonly remainingMs: () => number) {}

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const problem = schemaBoundsProblem(schema);
    const validator = problem ? undefined : new Validator(withoutKeywords(schema, SKIPPED) as Schema, "2020-12", true);
    return (input) => {
      if (!validator) return invalid(`the output schema ${problem}`);
      const checks = Math.min(MAX_VALIDATION_CHECKS, Math.floor(Math.max(0, this.remainingMs()) * CHECKS_PER_MS));
      const tooMuch = validationWorkProblem(schema, input, checks);
      if (tooMuch) return invalid(`the structured content ${tooMuch} in what is left of timeout_ms`);
      const result = validator.validate(input);
      return result.valid
        ? { valid: true, data: input as T, errorMessage: undefined }
        : invalid(result.errors.map((e) => `${e.instanceLocation}: ${e.error}`).join("; "));
    };
  }
}
