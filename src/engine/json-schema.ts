import * as z from "zod";
import { validationWorkProblem } from "./schema-bounds";
import type { JSONSchema } from "./types/json-schema";

const compiled = new WeakMap<JSONSchema, z.ZodType>();

/**
 * Turns a JSON Schema into a zod validator (cached per schema object). Throws on a
 * schema zod cannot read, which the catalog reports as a worker-file error. A value
 * too large to check against it within `MAX_VALIDATION_CHECKS` is refused before zod
 * looks at it: validation is synchronous, and a run's object answers nothing meanwhile.
 */
export function validatorFor(schema: JSONSchema): z.ZodType {
  let v = compiled.get(schema);
  if (!v) {
    const checked = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    v = z
      .unknown()
      .superRefine((value, ctx) => {
        const problem = validationWorkProblem(schema, value);
        if (problem) ctx.addIssue({ code: "custom", message: `the value ${problem}` });
      })
      .pipe(checked);
    compiled.set(schema, v);
  }
  return v;
}

/** `path: message; …` — short enough for a model or an HTTP 400 body. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`).join("; ");
}

/** The JSON Schema a model sees for a zod input: no `$schema` noise. */
export function toolParameters(schema: z.ZodType): JSONSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" }) as JSONSchema;
  return rest;
}
