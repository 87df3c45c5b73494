/**
 * A form for a tool's arguments, from its input schema: one field per top-level property —
 * text, number, a true/false choice, a choice of an `enum`'s values, and raw JSON for
 * anything else (objects, arrays, unions) — filled with the asked arguments; and the
 * arguments read back from the posted form. The schema is a tool's (an MCP server's
 * included), so its names and descriptions are data: escaped where shown, and the object
 * read back is built with own properties only (a property named `__proto__` stays one).
 * The run checks the result against the schema; here only what the form itself can get wrong.
 */

/** Past this many properties the page offers raw JSON only. */
const MAX_FIELDS = 40;
/** An `enum` with more values than this is raw JSON too. */
const MAX_OPTIONS = 50;
/** A string field is one line when it holds a short single line and its schema bounds it (a URL, a name); else a text box. */
const ONE_LINE_CHARS = 120;

/** The posted field of property `name`. */
export const fieldName = (name: string) => `arg.${name}`;

interface FieldBase {
  name: string;
  required: boolean;
  description?: string;
}

type FieldKind =
  | { kind: "string"; value: string; multiline: boolean }
  | { kind: "number"; value: string; integer: boolean }
  | { kind: "boolean"; value: "true" | "false" | "" }
  /** Options' values and the field's value as JSON texts (an enum may mix strings and numbers); labels as people read them. */
  | { kind: "enum"; options: Array<{ value: string; label: string }>; value: string }
  | { kind: "json"; value: string };

export type ArgumentField = FieldBase & FieldKind;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);

/** The fields for `schema`'s properties, filled from `args`; null when the schema is not an object of at most MAX_FIELDS named properties. */
export function argumentFields(schema: unknown, args: unknown): ArgumentField[] | null {
  if (!isObject(schema) || !isObject(schema.properties)) return null;
  const names = Object.keys(schema.properties);
  if (!names.length || names.length > MAX_FIELDS) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
  const asked = isObject(args) ? args : {};
  return names.map((name) => {
    const p = schema.properties as Record<string, unknown>;
    const prop = isObject(p[name]) ? p[name] : {};
    const base: FieldBase = {
      name,
      required: required.has(name),
      ...(typeof prop.description === "string" ? { description: prop.description.slice(0, 300) } : {}),
    };
    const value = Object.hasOwn(asked, name) ? asked[name] : undefined;
    return { ...base, ...fieldOf(prop, value) };
  });
}

function fieldOf(prop: Record<string, unknown>, value: unknown): FieldKind {
  const json = () => ({ kind: "json" as const, value: value === undefined ? "" : JSON.stringify(value, null, 2) });
  if (Array.isArray(prop.enum)) {
    if (prop.enum.length > MAX_OPTIONS || !prop.enum.every(isPrimitive)) return json();
    const options = prop.enum.map((o) => ({ value: JSON.stringify(o), label: typeof o === "string" ? o : JSON.stringify(o) }));
    return { kind: "enum", options, value: value === undefined ? "" : JSON.stringify(value) };
  }
  if (prop.type === "string" && (value === undefined || typeof value === "string")) {
    const text = value ?? "";
    const bounded = typeof prop.format === "string" || (typeof prop.maxLength === "number" && prop.maxLength <= 200);
    return { kind: "string", value: text, multiline: !bounded || text.includes("\n") || text.length > ONE_LINE_CHARS };
  }
  if ((prop.type === "number" || prop.type === "integer") && (value === undefined || typeof value === "number"))
    return { kind: "number", value: value === undefined ? "" : String(value), integer: prop.type === "integer" };
  if (prop.type === "boolean" && (value === undefined || typeof value === "boolean"))
    return { kind: "boolean", value: value === undefined ? "" : value ? "true" : "false" };
  return json();
}

/**
 * The arguments a posted form gives for `fields` (from `argumentFields` of the same schema
 * and asked arguments), with the asked arguments it has no field for, or why not, naming
 * the field. An empty field is left out (kept as
 * `""` when the asked value was that); text boxes' line breaks, which browsers send as
 * CRLF, are read back as they were written.
 */
export function argumentsFromForm(
  fields: ArgumentField[],
  form: Record<string, unknown>,
  args: unknown,
): { args: Record<string, unknown> } | { problem: string } {
  const asked = isObject(args) ? args : {};
  // What the form shows no field for (a schema open to more) goes as asked: never dropped unseen.
  const shown = new Set(fields.map((f) => f.name));
  const entries: Array<[string, unknown]> = Object.entries(asked).filter(([name]) => !shown.has(name));
  for (const f of fields) {
    const key = fieldName(f.name);
    const raw = Object.hasOwn(form, key) ? form[key] : undefined;
    if (raw !== undefined && typeof raw !== "string") return { problem: `arguments.${f.name}: not text` };
    const text = raw ?? "";
    const where = `arguments.${f.name}`;
    if (text === "") {
      if (f.kind === "string" && asked[f.name] === "") entries.push([f.name, ""]);
      continue;
    }
    switch (f.kind) {
      case "string":
        entries.push([f.name, f.multiline ? text.replace(/\r\n/g, "\n") : text]);
        break;
      case "number": {
        const n = Number(text.trim());
        if (!text.trim() || !Number.isFinite(n)) return { problem: `${where}: "${text.slice(0, 40)}" is not a number` };
        entries.push([f.name, n]);
        break;
      }
      case "boolean":
        if (text !== "true" && text !== "false") return { problem: `${where}: choose true or false` };
        entries.push([f.name, text === "true"]);
        break;
      case "enum":
        if (!f.options.some((o) => o.value === text)) return { problem: `${where}: not one of the choices` };
        entries.push([f.name, JSON.parse(text)]);
        break;
      case "json": {
        const parsed = parseJson(text);
        if (!parsed.ok) return { problem: `${where}: not valid JSON` };
        entries.push([f.name, parsed.value]);
        break;
      }
    }
  }
  return { args: Object.fromEntries(entries) };
}

/** The raw JSON box: one JSON object. */
export function argumentsFromJson(text: string): { args: unknown } | { problem: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { problem: "arguments: not valid JSON" };
  return isObject(parsed.value) ? { args: parsed.value } : { problem: "arguments: must be a JSON object" };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
