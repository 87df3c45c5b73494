/** Tokens and cost of model requests, summed. */
export interface Usage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What one call adds its usage to: a sink that rolls each addition up to its parents (implemented by `UsageMeter`, run/usage.ts). */
export interface UsageSink {
  readonly total: Usage;
  add(u: Usage): void;
  /** A sink for a nested call: what it adds is added here too. */
  child(): UsageSink;
  snapshot(): Usage;
}

export interface ModelPrice {
  input: number;
  output: number;
}

/** USD per million tokens, by model name (`provider:model`). */
export type PriceTable = Record<string, ModelPrice>;
