import * as z from "zod";
import { MAX_ATTRIBUTE_FILTERS } from "./index-types";
import { attributesSchema } from "./attribute-schema";
import { RUN_STATUSES } from "./types";

/** The `worker` and `trigger` filters of run listings (the API's `GET /runs` and the inbox): names only, so a filter is never a pattern. */
export const runFilters = {
  worker: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "not a worker name")
    .optional(),
  trigger: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "not a trigger kind or name")
    .optional(),
};

/** Epoch milliseconds (a number, or its digits) or an ISO 8601 date(-time). */
export const since = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().max(64)]).transform((s, ctx) => {
  const at = typeof s === "number" ? s : /^\d{1,16}$/.test(s) ? Number(s) : Date.parse(s);
  if (Number.isNaN(at)) ctx.addIssue({ code: "custom", message: "expected epoch milliseconds or an ISO 8601 date, e.g. 2026-11-01T00:00:00Z" });
  return at;
});

/** `attr.<name>=<value>` criteria: each attribute has exactly that value. */
export const attributeCriteria = attributesSchema(MAX_ATTRIBUTE_FILTERS, "attribute criteria");

/** A filter of runs as JSON (`POST /operations`): the criteria of `GET /runs`, `attributes` as an object. */
export const runFilterBody = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  ...runFilters,
  since: since.optional(),
  attributes: attributeCriteria.optional(),
});

/** Where a query string's `attr.<name>` parameters are gathered (an issue's path `attributes.<name>` reads `attr.<name>` again). */
const ATTR = "attr.";

/** A query string's parameters with every `attr.<name>` gathered under `attributes` (none: no `attributes`). */
export function gatherAttributes(query: Record<string, string>): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    if (k.startsWith(ATTR)) attributes[k.slice(ATTR.length)] = v;
    else rest[k] = v;
  }
  return Object.keys(attributes).length ? { ...rest, attributes } : rest;
}

/** An issue's path as the query string names it: `attributes.repo` → `attr.repo`. */
export const queryPath = (path: string) =>
  path === "attributes" ? "attr.*" : path.startsWith("attributes.") ? `attr.${path.slice("attributes.".length)}` : path;
