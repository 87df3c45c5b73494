/**
 * Flow control of a trigger (workers/triggers.yaml): its key, and what happens to the
 * deliveries of one key — how many runs at once (`concurrency`), started once it has
 * been quiet (`debounce`), how many let through per period (`rate`). Every value is
 * bounded here, where the file is read; docs/triggers.md, "Flow control".
 */

import * as z from "zod";
import { durationMs, EVENT_NAME, shownDuration } from "../../engine/waits/bounds";
import { POINTER } from "../json-pointer";

/** JSON pointers a key may read. */
export const MAX_KEY_POINTERS = 5;
/** Characters of one key value (a string, or a number or boolean as written). */
export const MAX_KEY_VALUE_CHARS = 256;
/** Runs of one key at once. */
export const MAX_CONCURRENCY = 100;
/** Deliveries of one key that may wait in its line (queued, or over the rate); one more is refused (429). */
export const MAX_LINE = 100;
/** Bytes of input the deliveries waiting in one key's line may hold together; one more is refused (429). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** Deliveries one debounced start takes at most: a batch that reaches it starts at once. */
export const MAX_BATCH = 100;
/** Debounce: between a second and a day of quiet; `max_wait` at most a week. */
const MIN_DEBOUNCE_MS = 1000;
const MAX_DEBOUNCE_MS = 86_400_000;
const MAX_DEBOUNCE_WAIT_MS = 7 * 86_400_000;
/** A rate's count per period. */
const MAX_RATE = 100_000;

const duration = (min: number, max: number) =>
  z.string().transform((v, ctx) => {
    let ms: number;
    try {
      ms = durationMs(v, "duration");
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message.replace(/^duration: /, "") });
      return z.NEVER;
    }
    if (ms < min || ms > max) {
      ctx.addIssue({ code: "custom", message: `${v} is outside ${shownDuration(min)} to ${shownDuration(max)}` });
      return z.NEVER;
    }
    return ms;
  });

const PERIOD_MS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
};
const RATE = /^(\d{1,6})\/([a-z]{1,6})$/;

/** `10/min`: at most 10 per minute (s, sec, second, m, min, minute, h, hour, d, day). */
const rateText = z.string().transform((v, ctx) => {
  const m = v.length <= 16 ? RATE.exec(v.replace(/\s+/g, "")) : null;
  const period = m ? PERIOD_MS[m[2]!] : undefined;
  const limit = m ? Number(m[1]) : 0;
  if (!m || period === undefined || limit < 1 || limit > MAX_RATE) {
    ctx.addIssue({ code: "custom", message: `must be a count per period such as 10/min (1 to ${MAX_RATE} per s, min, h or day)` });
    return z.NEVER;
  }
  return { limit, periodMs: period };
});

export const onBusySchema = z.union([
  z.enum(["queue", "skip", "replace", "message"]),
  z.strictObject({ event: z.string().regex(EVENT_NAME, "must be 1-64 characters of A-Z a-z 0-9 _ . -") }),
]);

export const flowSchema = {
  /** JSON pointers into the payload: the run's entity (`[/repository/full_name, /issue/number]`). */
  key: z.array(z.string().max(256).regex(POINTER, "must be a JSON pointer such as /issue/number")).min(1).max(MAX_KEY_POINTERS).optional(),
  /** `limit` runs of one key at once; a delivery for a busy key is queued, skipped, replaces the oldest run, or goes to the run. */
  concurrency: z.strictObject({ limit: z.number().int().min(1).max(MAX_CONCURRENCY), on_busy: onBusySchema.default("queue") }).optional(),
  /** One run once the key has been quiet this long: with the last payload, or all of them (`batch`). */
  debounce: z
    .union([
      duration(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS).transform((after) => ({ after, batch: false, max_wait: undefined as number | undefined })),
      z.strictObject({
        after: duration(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS),
        batch: z.boolean().default(false),
        /** Starts anyway this long after the first delivery of a burst that never goes quiet. */
        max_wait: duration(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_WAIT_MS).optional(),
      }),
    ])
    .optional(),
  /** At most `limit` deliveries per period let through to a run, per key; over it refused (429) or kept in the key's line. */
  rate: z
    .union([
      rateText.transform((r) => ({ ...r, over: "refuse" as "refuse" | "queue" })),
      z.strictObject({ limit: rateText, over: z.enum(["refuse", "queue"]).default("refuse") }).transform((r) => ({ ...r.limit, over: r.over })),
    ])
    .optional(),
};

/** A schedule's overlap: at most `limit` of its runs at once; a firing while they work is queued, skipped or replaces the oldest. */
export const scheduleConcurrencySchema = z
  .strictObject({ limit: z.number().int().min(1).max(MAX_CONCURRENCY), on_busy: z.enum(["queue", "skip", "replace"]).default("queue") })
  .optional();

const flowObject = z.object(flowSchema);
export type FlowConfig = z.output<typeof flowObject>;
export type OnBusy = z.output<typeof onBusySchema>;

/** The trigger's flow control, or undefined when it has none (each delivery starts its own run). */
export function flowOf(t: Partial<FlowConfig>): FlowConfig | undefined {
  return t.concurrency || t.debounce || t.rate ? { key: t.key, concurrency: t.concurrency, debounce: t.debounce, rate: t.rate } : undefined;
}

/** A problem with the combination, at its field; undefined when it holds together. */
export function flowProblem(
  t: Partial<FlowConfig>,
  worker: { code?: unknown; input: { properties?: unknown } },
): { field: string; message: string } | undefined {
  if (t.key && !flowOf(t)) return { field: "key", message: "a key takes effect with concurrency, debounce or rate: add one, or leave the key out" };
  const busy = t.concurrency?.on_busy;
  if ((busy === "message" || typeof busy === "object") && t.concurrency!.limit !== 1)
    return { field: "concurrency.limit", message: "on_busy: message or {event} gives a delivery to the key's one run: limit must be 1" };
  if (busy === "message" && worker.code)
    return { field: "concurrency.on_busy", message: "a code function takes no messages: use {event: name}, queue, skip or replace" };
  if (t.debounce?.max_wait !== undefined && t.debounce.max_wait < t.debounce.after) return { field: "debounce.max_wait", message: "must be at least `after`" };
  if (t.debounce?.batch && !(worker.input.properties && typeof worker.input.properties === "object" && "batch" in worker.input.properties))
    return { field: "debounce.batch", message: "a batched run's input is {batch: [each delivery's input]}: the worker's input needs a `batch` array" };
  return undefined;
}
