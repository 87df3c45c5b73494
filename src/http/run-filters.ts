import * as z from "zod";

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
