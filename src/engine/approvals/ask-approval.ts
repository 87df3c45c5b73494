import { ApprovalRequired, nondeterministic, type PendingApproval } from "../errors";
import { approvedArgsOf, bindsArguments } from "../journal/fingerprint";
import { approvalId } from "../ids";
import type { Journal } from "../journal/journal";
import { approvalKey, notifyKey } from "../journal/keys";
import type { Decider } from "../types/deciders";

/** What is recorded in the journal when someone decides (or the run mode decides). */
export interface ApprovalDecision {
  approved: boolean;
  note?: string;
  /** Who or what decided, as people read it ("approval link (lead@example.com)", "expiry"). */
  by: string;
  /** The person who decided and how; absent for decisions no person made (an expiry, the run's approval mode). */
  decider?: Decider;
  /** A question's answer (`kind: "question"`), as the person wrote it (bounded by the host). */
  answer?: string;
  /**
   * Set when the approver edited the call before approving it: the arguments it runs with,
   * checked against the tool's input schema (edit.ts). The decision stays bound to the
   * arguments it was asked with (`args_hash`), so a replay runs the same edit or fails.
   */
  args?: unknown;
  /** Set when the approver answered in place of the call (`approved` is false): its result, given by a person; the tool never runs. */
  response?: string;
  /** Set when the approver chose to approve identical calls for the rest of the run. */
  remember?: { worker: string; tool: string; args: unknown };
  /**
   * The arguments the decision was made on (journal/fingerprint.ts `approvedArgs`): a
   * replay that reaches this approval with other arguments fails instead of running
   * them under it. Absent in older journals.
   */
  args_hash?: string;
}

/** Keeps a pending approval where people can find and decide it: the run's job. Asked again on replay, so idempotent. */
export type ApprovalRecorder = (pending: PendingApproval) => void | Promise<void>;

/** Tells a human that an approval waits (e.g. by email), nothing else. Runs once, as a journal step. */
export type ApprovalNotifier = (pending: PendingApproval) => Promise<unknown>;

/** What the host does with an approval nobody has decided yet. */
export interface ApprovalHost {
  record?: ApprovalRecorder;
  notifier?: ApprovalNotifier;
}

export interface ApprovalAsk {
  journal: Journal;
  host: ApprovalHost;
  /** The call asked about; its decision is recorded under `<callPath>/approval`. */
  callPath: string;
  /** What the approver is shown. */
  asked: Pick<PendingApproval, "workerChain" | "tool" | "args" | "description" | "notify" | "deciders" | "kind" | "inputSchema">;
  /** A decision taken without a person (a remembered call, the run's approval mode), or none. */
  decideWithoutAsking(): ApprovalDecision | undefined;
}

/**
 * The decision for the call at `callPath`: the one recorded, else the one taken
 * without asking (recorded now). Else the run records the pending approval, its
 * approver is told (once: a journal step) and `ApprovalRequired` suspends the run.
 * What a decision means (a tool's result, a budget's end) is the caller's.
 */
export async function askApproval(a: ApprovalAsk): Promise<ApprovalDecision> {
  const key = approvalKey(a.callPath);
  const argsHash = bindsArguments(key) ? approvedArgsOf(a.asked.args) : undefined;
  const recorded = a.journal.get<ApprovalDecision>(key);
  if (recorded) return bound(key, recorded, a.asked.tool, argsHash);
  const decided = a.decideWithoutAsking();
  if (decided) {
    // A person may have decided it while this activation waited: theirs is the decision (the first written).
    return bound(key, await a.journal.record(key, argsHash === undefined ? decided : { ...decided, args_hash: argsHash }), a.asked.tool, argsHash);
  }
  const pending: PendingApproval = { key, id: await approvalId(key), callPath: a.callPath, ...a.asked, workerChain: [...a.asked.workerChain] };
  await a.host.record?.(pending);
  const notifier = a.host.notifier;
  if (notifier) await a.journal.step(notifyKey(a.callPath), () => notifier(pending));
  throw new ApprovalRequired([pending]);
}

/** `decision`, if it was made on these arguments. */
function bound(key: string, decision: ApprovalDecision, tool: string, argsHash: string | undefined): ApprovalDecision {
  if (decision.args_hash !== undefined && bindsArguments(key) && decision.args_hash !== argsHash)
    throw nondeterministic(
      key,
      `a decision on ${tool} with arguments ${decision.args_hash.slice(0, 12)}`,
      `${tool} with arguments ${argsHash?.slice(0, 12) ?? "that are not JSON"}`,
    );
  return decision;
}
