import * as z from "zod";
import { attributeCriteria } from "./attributes";
import { RUN_STATUSES } from "./common";

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

/** A filter of runs as JSON (`POST /operations`): the criteria of `GET /runs`, `attributes` as an object. */
export const runFilterBody = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  ...runFilters,
  since: since.optional(),
  attributes: attributeCriteria.optional(),
});
