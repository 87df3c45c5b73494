import { ApprovalRequired, ToolError, type PendingApproval } from "../../errors";
import { stableJson } from "../../ids";
import type { Journal } from "../../journal/journal";
import { approvalKey, notifyKey, parseKey } from "../../journal/keys";
import { approvalId } from "../../ids";
import { LatestListing } from "../latest-listing";
import type { ToolContext } from "../../types/context";
import type { Policy, ToolDef, Toolset } from "../../types/toolset";

export type ApprovalMode = "ask" | "approve_all" | "reject_all";

/** What is recorded in the journal when someone decides (or the run mode decides). */
export interface ApprovalDecision {
  approved: boolean;
  note?: string;
  by: string;
  /** Set when the approver chose to approve identical calls for the rest of the run. */
  remember?: { worker: string; tool: string; args: unknown };
}

/** Tells a human that an approval waits (e.g. by email). Runs once, as a journal step. */
export type ApprovalNotifier = (pending: PendingApproval) => Promise<unknown>;

export interface ApprovalGate {
  journal: Journal;
  mode: ApprovalMode;
  /** Exposed tool name → policy, from the worker file; wins over the kind's default. */
  policies: Readonly<Record<string, Policy>>;
  workerChain: readonly string[];
  notify?: string;
  notifier?: ApprovalNotifier;
  /** Signatures (`callSignature`) of calls approved "for the rest of the run". */
  remembered: ReadonlySet<string>;
}

/** Same worker, same tool, same arguments. */
export const callSignature = (worker: string, tool: string, args: unknown) => `${worker}\u0000${tool}\u0000${stableJson(args)}`;

/** Every "approve identical calls" decision recorded in a journal. */
export function rememberedApprovals(journal: Journal): Set<string> {
  const set = new Set<string>();
  for (const [key, value] of journal.entries()) {
    // Any step's value (null too): the key is parsed only for an approved decision to remember.
    const d = value as ApprovalDecision | null;
    if (d?.approved && d.remember && parseKey(key).kind === "approval") set.add(callSignature(d.remember.worker, d.remember.tool, d.remember.args));
  }
  return set;
}

/**
 * Approval gating as a wrapper: `deny` refuses, `ask` needs a decision in the
 * journal (under `<call path>/approval`) or raises `ApprovalRequired` so the run
 * suspends. A rejection is the tool's result, so the model can adapt.
 */
export function approvalGated(inner: Toolset, gate: ApprovalGate): Toolset {
  // Looked up by every tool call, without waiting once listed.
  const defs = new LatestListing(async () => new Map((await inner.listTools()).map((d) => [d.name, d])));
  const policyOf = (def: ToolDef, args: unknown): Policy => gate.policies[def.name] ?? def.approval(args);
  // A policy function that throws is not "allow": `gated` calls it again, and its error fails the call.
  const allowed = (def: ToolDef, args: unknown) => {
    try {
      return policyOf(def, args) === "allow";
    } catch {
      return false;
    }
  };
  const gated = async (name: string, args: unknown, ctx: ToolContext): Promise<unknown> => {
    const def = (await defs.get()).get(name);
    // Nothing to gate: the inner toolset answers with the list of known tools.
    if (!def) return inner.callTool(name, args, ctx);
    const policy = policyOf(def, args);
    if (policy === "deny") throw new ToolError(`tool "${name}" is denied by the approval policy of worker "${gate.workerChain.at(-1)}"`);
    if (policy === "ask") {
      const key = approvalKey(ctx.callPath);
      let decision = gate.journal.get<ApprovalDecision>(key);
      if (!decision) {
        if (gate.remembered.has(callSignature(gate.workerChain.at(-1)!, name, args))) {
          decision = { approved: true, by: "an earlier approval of this same call" };
        } else if (gate.mode !== "ask") {
          decision = { approved: gate.mode === "approve_all", by: `approval_mode ${gate.mode}` };
        }
        if (decision) await gate.journal.record(key, decision);
      }
      if (!decision) {
        const pending: PendingApproval = {
          key,
          id: await approvalId(key),
          callPath: ctx.callPath,
          workerChain: [...gate.workerChain],
          tool: name,
          args,
          description: `${gate.workerChain.join(" → ")} wants to call ${name}`,
          notify: gate.notify,
        };
        const notifier = gate.notifier;
        if (notifier) await gate.journal.step(notifyKey(ctx.callPath), () => notifier(pending));
        throw new ApprovalRequired([pending]);
      }
      if (!decision.approved) {
        throw new ToolError(`the call to ${name} was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`);
      }
    }
    return inner.callTool(name, args, ctx);
  };
  return {
    id: inner.id,
    // Each listing refreshes the map, so a tool added since (a created worker) is gated by its own definition.
    listTools: async () => [...(await defs.refresh()).values()],
    callTool(name, args, ctx) {
      // Listed and allowed (most calls): straight through, without a frame of ours.
      const def = defs.current?.get(name);
      return def && allowed(def, args) ? inner.callTool(name, args, ctx) : gated(name, args, ctx);
    },
  };
}
