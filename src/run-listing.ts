import type { Usage } from "./engine";
import type { RunStatusName } from "../durable-objects/run-types";

/**
 * What the inbox reads: runs newest first and every pending approval. The run index
 * (RunIndexDO, merged separately) answers both; these shapes are its
 * `RunListItem` / `PendingApprovalItem`, so wiring it in changes only the two bodies
 * below, to `runIndex(env).listRuns(filter)` and `runIndex(env).pendingApprovals()`.
 */
export interface RunFilter {
  status?: RunStatusName;
  worker?: string;
  /** A trigger kind (`api`, `webhook`) or a trigger's name. */
  trigger?: string;
  limit: number;
}

export interface ListedRun {
  id: string;
  worker: string;
  status: RunStatusName;
  trigger: { kind: string; name?: string };
  created_at: number;
  updated_at: number;
  usage: Usage | null;
}

export interface ListedApproval {
  run_id: string;
  run_worker: string;
  id: string;
  tool: string;
  worker_chain: string[];
  created_at: number;
  expires_at: number;
}

export async function listRuns(_env: Env, _filter: RunFilter): Promise<{ runs: ListedRun[] }> {
  return { runs: [] }; // until the run index is merged
}

export async function listPendingApprovals(_env: Env): Promise<{ approvals: ListedApproval[]; truncated: boolean }> {
  return { approvals: [], truncated: false }; // until the run index is merged
}
