import { ApprovalRequired, RunError, type PendingApproval } from "./errors";
import { approvalId } from "./ids";
import { approvalKey, budgetPath, notifyKey, parseKey } from "./journal/keys";
import type { CallFrame } from "./call-frame";
import type { Budget, RunServices } from "./run";
import type { ApprovalDecision } from "./toolsets/wrappers/approval";

/** The pseudo-tool a budget approval is about: the approval page, email, link and API show it like any call. */
export const BUDGET_TOOL = "continue_past_budget";

/** The run request's limits over the root worker's (`budget:` in its file): the run's limits, made once per activation. */
export function runBudget(request: Budget, root: Budget = {}): Budget {
  const defined = Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined));
  return { ...root, ...defined };
}

/** Extensions approved so far: each adds the original limit again. Replay sees the same journal, so agrees. */
function extensions(run: RunServices): number {
  let n = 0;
  for (const [key, value] of run.journal.entries()) if ((value as ApprovalDecision | null)?.approved && parseKey(key).kind === "budget_approval") n++;
  return n;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/**
 * Checked before each model request that is about to execute (never on replay).
 * Over budget: `budget_exceeded`, or with `on_exceed: ask` a pause for the run's
 * approver to continue past it, under a key derived from the request's own key.
 * Under budget (almost always) it returns without a promise.
 */
export function checkBudget(run: RunServices, frame: CallFrame, stepKey: string): void | Promise<void> {
  const budget = run.budget;
  const used = run.usage.total;
  const times = budget.onExceed === "ask" ? 1 + extensions(run) : 1;
  if (budget.maxTokens !== undefined && used.inputTokens + used.outputTokens >= budget.maxTokens * times) {
    throw new RunError("budget_exceeded", `run budget exceeded: ${used.inputTokens + used.outputTokens} tokens used, max_tokens is ${budget.maxTokens}`, true);
  }
  if (budget.maxCostUsd === undefined || used.costUsd < budget.maxCostUsd * times) return;
  return overCost(run, frame, stepKey, budget.maxCostUsd, times);
}

/** Over `max_cost_usd`: fails, or (`on_exceed: ask`) asks the run's approver to continue past it. */
async function overCost(run: RunServices, frame: CallFrame, stepKey: string, maxCostUsd: number, times: number): Promise<void> {
  const used = run.usage.total;
  const exceeded = `run budget exceeded: $${used.costUsd.toFixed(6)} spent, max_cost_usd is ${maxCostUsd}`;
  if (run.budget.onExceed !== "ask") throw new RunError("budget_exceeded", exceeded, true);

  const callPath = budgetPath(stepKey);
  const key = approvalKey(callPath);
  let decision = run.journal.get<ApprovalDecision>(key);
  // Only a person extends a budget: approve_all (e.g. a public webhook's trigger) would make it no budget.
  if (!decision && run.approvalMode !== "ask") {
    decision = { approved: false, by: `approval_mode ${run.approvalMode} (a budget is extended only by a person)` };
    await run.journal.record(key, decision);
  }
  if (!decision) {
    const limit = maxCostUsd * times;
    const pending: PendingApproval = {
      key,
      id: await approvalId(key),
      callPath,
      workerChain: [...frame.chain],
      tool: BUDGET_TOOL,
      args: { max_cost_usd: limit, spent_usd: Number(used.costUsd.toFixed(6)), extend_by_usd: maxCostUsd },
      description: `continue past the budget of ${usd(limit)}? spent ${usd(used.costUsd)}`,
      notify: run.catalog.get(frame.chain[0]!)?.notify,
    };
    const notifier = run.notifier;
    if (notifier) await run.journal.step(notifyKey(callPath), () => notifier(pending));
    throw new ApprovalRequired([pending]);
  }
  // Approved: this key now counts as an extension, so the check above passes. Rejected: the run ends.
  if (!decision.approved) throw new RunError("budget_exceeded", `${exceeded}; continuing past it was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`, true);
}
