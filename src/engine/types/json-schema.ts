/** A JSON Schema document as the engine passes it around (checked where it is read: json-schema.ts). */
export type JSONSchema = Record<string, unknown>;
