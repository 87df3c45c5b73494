import * as z from "zod";
import type { RetryConfig, ToolFailure } from "../types/retry";

/**
 * A toolset instance's `retry:` (worker files): how its tools' transient failures are
 * tried again (wrappers/retrying.ts). Every field bounded: a worker file cannot make a
 * run try a call more than 10 times, or keep its object awake long between tries.
 *
 *   retry: { attempts: 3, backoff: 1s, on: [timeout, 5xx, 429], timeout_ms: 10000,
 *            tools: { fetch: { attempts: 5 } } }      # per tool (its name in the kind)
 */

export const MAX_ATTEMPTS = 10;
/**
 * The longest wait between two attempts, a Retry-After's included. The wait happens
 * inside the run's activation (its object stays awake meanwhile, and a crash resumes
 * it from the journal), so it stays short; a longer pause is a durable wait's job.
 */
export const MAX_BACKOFF_MS = 30_000;
/** What `on:` may name: a time limit (the tool's own or `timeout_ms`), an upstream's 5xx, its 429. */
export const RETRY_ON = ["timeout", "5xx", "429"] as const;
export type RetryOn = (typeof RETRY_ON)[number];

const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;
const BACKOFF = /^(\d{1,6})(ms|s|m)$/;

const backoff = z
  .string()
  .regex(BACKOFF, "must be a duration like 500ms, 2s or 1m")
  .transform((text) => {
    const m = BACKOFF.exec(text)!;
    return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  })
  .refine((ms) => ms <= MAX_BACKOFF_MS, "must be at most 30s");

// Described in docs/reference.md ("retry"), not here: the deployed bundle carries this schema.
const settings = {
  /** Tries in all (1: never retried); default 3. */
  attempts: z.number().int().min(1).max(MAX_ATTEMPTS).optional(),
  /** The first wait, doubled after each further failure; default 1s. */
  backoff: backoff.optional(),
  /** Which failures are retried; default all three. YAML reads a bare 429 as a number. */
  on: z
    .array(z.preprocess((v) => (v === 429 ? "429" : v), z.enum(RETRY_ON)))
    .min(1)
    .max(RETRY_ON.length)
    .optional(),
  /** Each try's time limit. */
  timeout_ms: z.number().int().min(1).max(120_000).optional(),
};

const toolRetry = z.strictObject(settings);

export const retrySchema: z.ZodType<RetryConfig, unknown> = z.strictObject({
  ...settings,
  /** Per tool (its name in the kind, unprefixed): the fields that differ. */
  tools: z.record(z.string().min(1).max(64), toolRetry).optional(),
});

/** One tool's policy, as the wrapper applies it. */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
  on: readonly RetryOn[];
  timeoutMs?: number;
}

export type { RetryConfig };

/** The policy of `tool` under `config`: its own fields over the instance's over the defaults. */
export function retryPolicy(config: RetryConfig, tool: string): RetryPolicy {
  const own = Object.hasOwn(config.tools ?? {}, tool) ? config.tools![tool] : undefined;
  const timeoutMs = own?.timeout_ms ?? config.timeout_ms;
  return {
    attempts: own?.attempts ?? config.attempts ?? 3,
    backoffMs: own?.backoff ?? config.backoff ?? 1000,
    on: own?.on ?? config.on ?? RETRY_ON,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

/** Whether `policy` retries `failure`. */
export function retries(policy: RetryPolicy, failure: ToolFailure | undefined): boolean {
  if (!failure) return false;
  if (failure.reason === "timeout") return policy.on.includes("timeout");
  if (failure.status === 429) return policy.on.includes("429");
  return failure.status >= 500 && failure.status <= 599 && policy.on.includes("5xx");
}

/**
 * The wait before attempt `n + 1` after attempt `n` failed: the server's Retry-After if
 * it gave one, else the backoff doubled per earlier failure, at most MAX_BACKOFF_MS;
 * undefined when the server asks for longer than that (then retrying sooner is pointless).
 */
export function delayAfter(policy: RetryPolicy, n: number, failure: ToolFailure): number | undefined {
  if (failure.reason === "status" && failure.retryAfterMs !== undefined) return failure.retryAfterMs <= MAX_BACKOFF_MS ? failure.retryAfterMs : undefined;
  return Math.min(policy.backoffMs * 2 ** (n - 1), MAX_BACKOFF_MS);
}
