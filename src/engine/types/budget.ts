/** A run's spending limits (a worker file's `budget:`, a run request's). */
export interface Budget {
  maxTokens?: number;
  maxCostUsd?: number;
  /** `ask`: pause for the run's approver to extend the budget by the same amount (src/engine/run/budget.ts). */
  onExceed?: "fail" | "ask";
}
