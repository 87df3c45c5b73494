/** A toolset instance's `retry:` as parsed (toolsets/retry-config.ts reads and bounds it); `backoff` in ms. */
export interface RetrySettings {
  attempts?: number;
  backoff?: number;
  on?: Array<"timeout" | "5xx" | "429">;
  timeout_ms?: number;
}

/** The instance's settings, and per tool (its name in the kind) the ones that differ. */
export interface RetryConfig extends RetrySettings {
  tools?: Record<string, RetrySettings>;
}

/**
 * What kind of failure a tool met, as a retry policy reads it: a time limit, or an
 * upstream's status (`retryAfterMs`: its Retry-After, when it gave one).
 */
export type ToolFailure = { reason: "timeout" } | { reason: "status"; status: number; retryAfterMs?: number };
