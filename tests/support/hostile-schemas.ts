/** An `anyOf` of two `$ref`s to the next level, `levels` deep: 2^levels paths in a few hundred bytes. */
export function blowupSchema(levels: number): { type: "object"; [k: string]: unknown } {
  const $defs: Record<string, unknown> = { [`d${levels}`]: { type: "string" } };
  for (let i = 0; i < levels; i++) $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  return { type: "object", properties: { v: { $ref: "#/$defs/d0" } }, $defs };
}
