import * as z from "zod";
import { attributes, runStatus, started } from "./common";
import { runFilterBody } from "./run-filter";

/** `/operations`: bulk operations on the runs a filter matches (src/operations/api.ts does them). */

export const OPERATION_ACTIONS = ["cancel", "resume", "fork"] as const;
export const OPERATION_STATUSES = ["running", "done", "cancelled"] as const;
const action = z.enum(OPERATION_ACTIONS);
const definitions = z.enum(["current", "pinned"]);

/** `POST /operations`. */
export const operationBody = z
  .strictObject({
    action,
    /** The runs, as `GET /runs` filters them (attributes as an object); at least one criterion besides `since`. */
    filter: runFilterBody,
    /** `fork` only: `current` runs each fork on the deployed definitions ("re-run after a fix"), `pinned` on its source's. */
    definitions: definitions.optional(),
    /** Lists the runs it would touch (at most MAX_DRY_RUN), and makes no operation. */
    dry_run: z.boolean().default(false),
  })
  .superRefine((b, ctx) => {
    const f = b.filter;
    if (!f.status && !f.worker && !f.trigger && !Object.keys(f.attributes ?? {}).length)
      ctx.addIssue({
        code: "custom",
        path: ["filter"],
        message: "give at least one of status, worker, trigger or attributes: an operation on every run is refused",
      });
    if (b.definitions && b.action !== "fork") ctx.addIssue({ code: "custom", path: ["definitions"], message: "only a fork takes definitions" });
  });

/** `GET /operations/:id`, `POST /operations/:id/cancel`: an operation and its progress. */
export const operationView = z.object({
  id: z.string(),
  action,
  /** As checked: `since` in epoch ms. */
  filter: z.object({
    status: runStatus.optional(),
    worker: z.string().optional(),
    trigger: z.string().optional(),
    since: z.number().optional(),
    attributes: attributes.optional(),
  }),
  definitions,
  status: z.enum(OPERATION_STATUSES),
  /** Runs acted on (cancelled, resumed, forked), runs it could not act on (`failures`), runs with nothing to do (already ended, say). */
  counts: z.object({ done: z.number(), failed: z.number(), skipped: z.number() }),
  /** The oldest 50, each reason at most 300 characters. */
  failures: z.array(z.object({ run_id: z.string(), reason: z.string(), at: z.number() })),
  failures_truncated: z.boolean(),
  created_at: z.number(),
  updated_at: z.number(),
  finished_at: z.number().nullable(),
});

/** `POST /operations` → 202 (200 for a repeat with the same Idempotency-Key). */
export const operationStarted = started;

/** `POST /operations` with `dry_run: true` → 200: the runs it would touch (at most 1000), newest first; `skip`: why it would leave one alone. */
export const dryRunView = z.object({
  dry_run: z.literal(true),
  action,
  runs: z.array(z.object({ id: z.string(), worker: z.string(), status: runStatus, created_at: z.number(), attributes, skip: z.string().optional() })),
  truncated: z.boolean(),
});
