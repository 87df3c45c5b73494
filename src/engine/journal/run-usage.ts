import type { RecordedResponse } from "../run/model-step";
import { boundedUsage, emptyUsage } from "../run/usage";
import type { CallNode } from "./call-tree";
import { isModelStep, parseKey } from "./keys";
import type { ChildEnd } from "../types/children";
import type { Usage } from "../types/usage";

/**
 * The run's usage as its journal records it: every model answer of every call, nested
 * ones included, and what each child run that ended used. The one number `GET /runs/:id`,
 * the run page, the run index and the logs show, whatever state the run is in (running
 * between activations, handed off to the queue, paused, cancelled): the journal is written
 * with each answer, while the outcome events that also carry usage are written only when a
 * run pauses or ends.
 */
export function journalUsage(entries: Iterable<[string, unknown]>): Usage {
  const total = emptyUsage();
  for (const [key, value] of entries) {
    // A child run's end: what that run used, its own children's included (the engine adds it at the spawn).
    if (parseKey(key).kind === "child_end") {
      const used = boundedUsage((value as Partial<ChildEnd> | null)?.usage);
      if (used) add(total, used);
      continue;
    }
    // A model answer's step: a worker's turn or a function's `llmAsk`.
    if (!isModelStep(key)) continue;
    const r = value as Partial<RecordedResponse> | null;
    const u = r?.usage;
    if (!u || !Number.isFinite(u.inputTokens) || !Number.isFinite(u.outputTokens)) continue;
    add(total, { requests: 1, inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd: Number.isFinite(r.costUsd) ? r.costUsd! : 0 });
  }
  return total;
}

/** A call's usage with that of every call nested under it (its tree node holds its own only). */
export function rolledUpUsage(call: CallNode): Usage {
  const total = { ...call.usage };
  for (const tool of call.tools) for (const nested of tool.calls) add(total, rolledUpUsage(nested));
  return total;
}

function add(total: Usage, u: Usage): void {
  total.requests += u.requests;
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  total.costUsd += u.costUsd;
}
