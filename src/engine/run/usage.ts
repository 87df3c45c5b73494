import type { PriceTable, Usage, UsageSink } from "../types/usage";

export const emptyUsage = (): Usage => ({ requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });

/** The most any field of a usage another run reports may count (a child's end): a thousand children's sum stays finite and exact enough. */
export const MAX_REPORTED_USAGE = 1e12;

/**
 * A usage another run reported (a child's end crosses an RPC): each field a finite number from
 * 0 to MAX_REPORTED_USAGE, anything else (missing, negative, NaN, text) 0; undefined for no object.
 */
export function boundedUsage(u: unknown): Usage | undefined {
  if (typeof u !== "object" || u === null) return undefined;
  const field = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(v, MAX_REPORTED_USAGE) : 0);
  const r = u as Record<string, unknown>;
  return { requests: field(r.requests), inputTokens: field(r.inputTokens), outputTokens: field(r.outputTokens), costUsd: field(r.costUsd) };
}

/**
 * Defaults for the models we document; override or extend with the MODEL_PRICES var
 * (JSON `{ "openai:<model>": { "input": usd_per_mtok, "output": usd_per_mtok } }`).
 * Prices as published by OpenAI (platform.openai.com/docs/pricing) in 2026; `test:*` are free.
 */
export const defaultPrices: PriceTable = {
  "openai:gpt-4.1": { input: 2, output: 8 },
  "openai:gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "openai:gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "openai:gpt-4o": { input: 2.5, output: 10 },
  "openai:gpt-4o-mini": { input: 0.15, output: 0.6 },
};

export function costOf(model: string, inputTokens: number, outputTokens: number, prices: PriceTable): number {
  const p = prices[model];
  return p ? (inputTokens * p.input + outputTokens * p.output) / 1e6 : 0;
}

/**
 * A node in the usage tree: what is added here is added to every ancestor too,
 * so a nested worker's tokens roll up to its caller and to the run.
 */
export class UsageMeter implements UsageSink {
  readonly total: Usage = emptyUsage();
  constructor(readonly parent?: UsageMeter) {}

  add(u: Usage): void {
    for (let m: UsageMeter | undefined = this; m; m = m.parent) {
      m.total.requests += u.requests;
      m.total.inputTokens += u.inputTokens;
      m.total.outputTokens += u.outputTokens;
      m.total.costUsd += u.costUsd;
    }
  }

  child(): UsageMeter {
    return new UsageMeter(this);
  }

  snapshot(): Usage {
    return { ...this.total };
  }
}
