import type { JSONSchema } from "../types/json-schema";

/**
 * A value that satisfies a JSON Schema, for the `test:tools` model: first enum/const,
 * required properties filled, strings within length limits, numbers within bounds.
 */
export function exampleValue(schema: JSONSchema, label = "example"): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ("default" in schema) return schema.default;
  for (const k of ["anyOf", "oneOf", "allOf"] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length) return exampleValue(alts[0] as JSONSchema, label);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.filter((k) => props[k]).map((k) => [k, exampleValue(props[k]!, k)]));
    }
    case "array": {
      const n = Math.max(Number(schema.minItems ?? 0), 0);
      return Array.from({ length: n }, (_, i) => exampleValue((schema.items ?? {}) as JSONSchema, `${label}${i}`));
    }
    case "integer":
    case "number":
      return Math.max(Number(schema.minimum ?? 1), Math.min(1, Number(schema.maximum ?? 1)));
    case "boolean":
      return false;
    case "null":
      return null;
    default: {
      const min = Number(schema.minLength ?? 0);
      const max = Number(schema.maxLength ?? Infinity);
      return label.padEnd(min, "x").slice(0, max);
    }
  }
}
