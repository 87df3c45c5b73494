import { askApproval, type ApprovalDecision, type ApprovalHost } from "../approvals/ask-approval";
import { RunError } from "../errors";
import type { Journal } from "../journal/journal";
import { budgetPath, parseKey } from "../journal/keys";
import type { ApprovalMode } from "../toolsets/wrappers/approval";
import type { Budget } from "../types/budget";
import type { CallFrame } from "../types/callable";
import type { Usage } from "../types/usage";
import type { CatalogWorker } from "../types/worker";

/** The pseudo-tool a budget approval is about: the approval page, email, link and API show it like any call. */
export const BUDGET_TOOL = "continue_past_budget";

/** The run request's limits over the root worker's (`budget:` in its file): the run's limits, made once per activation. */
export function runBudget(request: Budget, root: Budget = {}): Budget {
  const defined = Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined));
  return { ...root, ...defined };
}

/** What the budget check reads of its run (run/executor.ts hands it the run's services, the same object for every check). */
export interface BudgetServices {
  /** The run's limits. */
  readonly budget: Budget;
  /** What the run has used so far, nested calls included. */
  readonly usage: { readonly total: Usage };
  /** Where extensions are approved (and counted again on replay). */
  readonly journal: Journal;
  readonly approvalMode: ApprovalMode;
  readonly approvals: ApprovalHost;
  /** The root worker's `notify:` is whom an extension is asked of. */
  readonly catalog: { get(name: string): CatalogWorker | undefined };
}

/** Extensions approved so far: each adds the original limit again. Replay sees the same journal, so agrees. */
function extensions(journal: Journal): number {
  let n = 0;
  for (const [key, value] of journal.entries()) if ((value as ApprovalDecision | null)?.approved && parseKey(key).kind === "budget_approval") n++;
  return n;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/** A limit the run is over: the failure's message, and what the approval to continue past it shows. */
interface Exceeded {
  message: string;
  args: Record<string, number>;
  description: string;
}

/**
 * Checked before each model request, and each child run's start, that is about to execute (never on replay).
 * Over budget: `budget_exceeded`, or with `on_exceed: ask` a pause for the run's
 * approver to continue past it, under a key derived from the request's own key.
 * Under budget (almost always) it returns without a promise.
 */
export function checkBudget(run: BudgetServices, frame: CallFrame, stepKey: string): void | Promise<void> {
  const over = exceededLimit(run);
  if (over) return overBudget(run, frame, stepKey, over);
}

/** The run's limits as they stand: each approved extension adds every limit's original amount again. */
function limitsNow(run: BudgetServices): { maxTokens?: number; maxCostUsd?: number } {
  const { maxTokens, maxCostUsd, onExceed } = run.budget;
  const times = onExceed === "ask" ? 1 + extensions(run.journal) : 1;
  return { ...(maxTokens !== undefined ? { maxTokens: maxTokens * times } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd: maxCostUsd * times } : {}) };
}

/**
 * `max_tokens` or `max_cost_usd`, whichever the run is over (tokens first). Each
 * approved extension adds every limit's original amount again, so approving a
 * run over either lets it go on by one more of that limit.
 */
function exceededLimit(run: BudgetServices): Exceeded | undefined {
  const { maxTokens, maxCostUsd } = run.budget;
  const limits = limitsNow(run);
  const used = run.usage.total;
  const tokens = used.inputTokens + used.outputTokens;
  if (maxTokens !== undefined && tokens >= limits.maxTokens!) {
    const limit = limits.maxTokens!;
    return {
      message: `run budget exceeded: ${tokens} tokens used, max_tokens is ${maxTokens}`,
      args: { max_tokens: limit, used_tokens: tokens, extend_by_tokens: maxTokens },
      description: `continue past the budget of ${limit} tokens? used ${tokens}`,
    };
  }
  if (maxCostUsd !== undefined && used.costUsd >= limits.maxCostUsd!) {
    const limit = limits.maxCostUsd!;
    return {
      message: `run budget exceeded: $${used.costUsd.toFixed(6)} spent, max_cost_usd is ${maxCostUsd}`,
      args: { max_cost_usd: limit, spent_usd: Number(used.costUsd.toFixed(6)), extend_by_usd: maxCostUsd },
      description: `continue past the budget of ${usd(limit)}? spent ${usd(used.costUsd)}`,
    };
  }
}

/**
 * What a child run started now may spend: each of the run's limits (extensions counted) less
 * what the run has used so far, its ended children's usage included; `on_exceed` as it is.
 * Called after `checkBudget` passed, so each limit left is above zero.
 */
export function remainingBudget(run: BudgetServices): Budget {
  const limits = limitsNow(run);
  const used = run.usage.total;
  const left: Budget = {};
  if (limits.maxTokens !== undefined) left.maxTokens = Math.max(0, limits.maxTokens - used.inputTokens - used.outputTokens);
  if (limits.maxCostUsd !== undefined) left.maxCostUsd = Math.max(0, limits.maxCostUsd - used.costUsd);
  if (run.budget.onExceed !== undefined) left.onExceed = run.budget.onExceed;
  return left;
}

/** Over a limit: fails, or (`on_exceed: ask`) asks the run's approver to continue past it. */
async function overBudget(run: BudgetServices, frame: CallFrame, stepKey: string, over: Exceeded): Promise<void> {
  if (run.budget.onExceed !== "ask") throw new RunError("budget_exceeded", over.message, true);

  const decision = await askApproval({
    journal: run.journal,
    host: run.approvals,
    callPath: budgetPath(stepKey),
    asked: { workerChain: frame.chain, tool: BUDGET_TOOL, args: over.args, description: over.description, notify: run.catalog.get(frame.chain[0]!)?.notify },
    // Only a person extends a budget: approve_all (e.g. a public webhook's trigger) would make it no budget.
    decideWithoutAsking: () =>
      run.approvalMode !== "ask" ? { approved: false, by: `approval_mode ${run.approvalMode} (a budget is extended only by a person)` } : undefined,
  });
  // Approved: this key now counts as an extension, so the check above passes. Rejected: the run ends.
  if (!decision.approved)
    throw new RunError(
      "budget_exceeded",
      `${over.message}; continuing past it was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`,
      true,
    );
}
