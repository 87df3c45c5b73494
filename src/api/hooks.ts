import * as z from "zod";

/**
 * `POST /hooks/:name`: what a signed delivery comes to. For a trigger with flow control
 * (src/triggers/flow/), the delivery's outcome: the same for every redelivery of it
 * (`duplicate: true` then), with the run's `status_url` when it names one.
 */

export const flowOutcomeSchema = z.union([
  /** A run started for it; `replaced`: the runs of its key cancelled to make room (`on_busy: replace`). */
  z.object({ run_id: z.string(), started: z.literal(true), replaced: z.array(z.string()).optional() }),
  /** It went to the key's run as a message (`on_busy: message`): answered after what the run works on. */
  z.object({ run_id: z.string(), messaged: z.literal(true) }),
  /** It went to the key's run as the event `event` (`on_busy: {event}`): taken by a wait, or kept for the next. */
  z.object({ run_id: z.string(), event: z.string() }),
  /** The key was busy (`on_busy: skip`): `run_id` is the run that has it. */
  z.object({ skipped: z.literal(true), run_id: z.string() }),
  /** It waits in the key's line (busy with `on_busy: queue`, or over the rate with `over: queue`); `position` 1 is next. */
  z.object({ queued: z.literal(true), position: z.number().int() }),
  /** It waits for the key to be quiet (`debounce`): one run then takes the last delivery (or all: `batch`); `until`: when, if none follows. */
  z.object({ debounced: z.literal(true), until: z.number() }),
  /** Its run could not start (e.g. a batch's input does not match the worker's): nothing more comes of it. */
  z.object({ failed: z.literal(true), error: z.string() }),
]);

/** `POST /hooks/:name`'s 202 body for a trigger with flow control: the outcome, the run's `status_url` when it names one, `duplicate` for a redelivery. */
export const hookFlowResponseSchema = z.intersection(flowOutcomeSchema, z.object({ status_url: z.string().optional(), duplicate: z.literal(true).optional() }));
/** Its 429 body: why, and when to send it again (also the `Retry-After` header). */
export const hookFlowRefusalSchema = z.object({ error: z.string(), retry_after: z.number().int().optional() });

/** A delivery of a trigger without flow control: its run (the same one for every redelivery: `duplicate`). */
export const hookRun = z.object({ run_id: z.string(), status_url: z.string(), duplicate: z.boolean() });
/** A delivery its trigger's `filter` leaves out: no run. */
export const hookIgnored = z.object({ ignored: z.literal(true), reason: z.string() });
/** A signal trigger's delivery: the runs waiting for its event under its key that it woke. */
export const hookSignal = z.object({ signal: z.string(), woken: z.number() });
/** Every 202 of `POST /hooks/:name`. */
export const hookAccepted = z.union([hookRun, hookIgnored, hookSignal, hookFlowResponseSchema]);
