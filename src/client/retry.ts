import { ConnectionError, type EdgeworkError } from "./errors";

/** The longest `Retry-After` honoured; a server asking for more gets its error back instead. */
export const MAX_RETRY_AFTER_MS = 60_000;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

/** Exponential backoff with jitter (so many clients do not retry in step): 0.5 s, 1 s, 2 s … at most 8 s. */
export function backoffMs(attempt: number): number {
  return Math.min(BASE_DELAY_MS * 2 ** attempt, MAX_DELAY_MS) * (1 - Math.random() * 0.25);
}

/** `Retry-After` as seconds or an HTTP date → ms from now; null when absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | null {
  const value = headers?.get("retry-after")?.trim();
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * How long to wait before sending the request again, or null: give up. Retried:
 * no response (network, timeout), 429 and 5xx; never another 4xx. The requests sent
 * through here may be sent twice: reads, cancel, decide and answer (a repeat is refused
 * with a 409), starting a run (its Idempotency-Key names the run the first started) and
 * events (their id), bulk operations (their Idempotency-Key), schedules made with your own id.
 * `runs.fork`, `runs.sendMessage` without a message id, `schedules.trigger` and `schedules.create`
 * without an id pass `maxRetries: 0`: a repeat of any could act twice.
 */
export function retryDelayMs(error: EdgeworkError, attempt: number, maxRetries: number): number | null {
  if (attempt >= maxRetries) return null;
  const status = error.status;
  const retryable = error instanceof ConnectionError || status === 429 || (status !== undefined && status >= 500);
  if (!retryable) return null;
  const asked = retryAfterMs(error.headers);
  if (asked === null) return backoffMs(attempt);
  return asked <= MAX_RETRY_AFTER_MS ? asked : null;
}
