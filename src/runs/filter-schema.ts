/** How a query string's `attr.<name>` parameters reach the API's filters (src/api/run-filter.ts), and how their problems are named. */

/** Where a query string's `attr.<name>` parameters are gathered (an issue's path `attributes.<name>` reads `attr.<name>` again). */
const ATTR = "attr.";

/** A query string's parameters with every `attr.<name>` gathered under `attributes` (none: no `attributes`). */
export function gatherAttributes(query: Record<string, string>): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    // `attr.__proto__` would set a prototype here (and in zod's record), dropping the criterion and
    // widening the listing: it stays a parameter of its own, which the strict query refuses by name.
    if (k.startsWith(ATTR) && k !== `${ATTR}__proto__`) attributes[k.slice(ATTR.length)] = v;
    else rest[k] = v;
  }
  return Object.keys(attributes).length ? { ...rest, attributes } : rest;
}

/** An issue's path as the query string names it: `attributes.repo` → `attr.repo`. */
export const queryPath = (path: string) =>
  path === "attributes" ? "attr.*" : path.startsWith("attributes.") ? `attr.${path.slice("attributes.".length)}` : path;
