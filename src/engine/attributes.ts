import { attributeNameProblem, attributeValue, MAX_ATTRIBUTES, type Attributes } from "../api/attributes";
import { ToolError } from "./errors";

/** The grammar is the API's (src/api/attributes.ts): one for every way in. Here, the checks a run's code meets. */
export { ATTRIBUTE_NAME, attributeNameProblem, attributeValue, MAX_ATTRIBUTE_CHARS, MAX_ATTRIBUTES, type Attributes } from "../api/attributes";

/** `name` and `value` checked for `ctx.setAttribute` (`what` names the call in the error the code reads). */
export function checkedAttribute(name: unknown, value: unknown, what: string): { name: string; value: string } {
  const nameProblem = attributeNameProblem(name);
  if (nameProblem) throw new ToolError(`${what}: ${nameProblem}`);
  const v = attributeValue(value);
  if ("problem" in v) throw new ToolError(`${what}("${name as string}"): ${v.problem}`);
  return { name: name as string, value: v.value };
}

/**
 * A whole set of attributes (a start's): each name and value checked, at most MAX_ATTRIBUTES.
 * `problems` names each bad entry by its name (`where` prefixes it: `attributes.repo`).
 */
export function checkedAttributes(raw: unknown, where = "attributes"): { attributes: Attributes } | { problems: string[] } {
  if (raw === undefined || raw === null) return { attributes: {} };
  if (typeof raw !== "object" || Array.isArray(raw)) return { problems: [`${where}: an object of attribute names to values`] };
  const entries = Object.entries(raw);
  if (entries.length > MAX_ATTRIBUTES) return { problems: [`${where}: at most ${MAX_ATTRIBUTES} attributes, got ${entries.length}`] };
  const attributes: Attributes = {};
  const problems: string[] = [];
  for (const [name, value] of entries) {
    const nameProblem = attributeNameProblem(name);
    if (nameProblem) {
      problems.push(`${where}: ${nameProblem}`);
      continue;
    }
    const v = attributeValue(value);
    if ("problem" in v) problems.push(`${where}.${name}: ${v.problem}`);
    else attributes[name] = v.value;
  }
  return problems.length ? { problems } : { attributes };
}

/** Attributes in one order (by name), so equal sets are equal JSON text. */
export function sortedAttributes(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
