import { ApprovalRequired, ToolError } from "../../errors";
import type { Journal } from "../../journal/journal";
import { approvalId } from "../../ids";
import type { Policy, ToolDef, Toolset } from "../toolset";

export type ApprovalMode = "ask" | "approve_all" | "reject_all";

/** What is recorded in the journal when someone decides (or the run mode decides). */
export interface ApprovalDecision {
  approved: boolean;
  note?: string;
  by: string;
  /** Approve identical calls (same tool, same arguments) for the rest of the run. */
  remember?: boolean;
}

export interface ApprovalGate {
  journal: Journal;
  mode: ApprovalMode;
  /** Exposed tool name → policy, from the worker file; wins over the kind's default. */
  policies: Readonly<Record<string, Policy>>;
  workerChain: readonly string[];
  notify?: string;
}

/**
 * Approval gating as a wrapper: `deny` refuses, `ask` needs a decision in the
 * journal (under `<call path>/approval`) or raises `ApprovalRequired` so the run
 * suspends. A rejection is the tool's result, so the model can adapt.
 */
export function approvalGated(inner: Toolset, gate: ApprovalGate): Toolset {
  let defs: Promise<Map<string, ToolDef>> | undefined;
  const defOf = async (name: string) => (await (defs ??= inner.listTools().then((l) => new Map(l.map((d) => [d.name, d]))))).get(name);
  return {
    id: inner.id,
    listTools: () => inner.listTools(),
    async callTool(name, args, ctx) {
      const def = await defOf(name);
      // Nothing to gate: the inner toolset answers with the list of known tools.
      if (!def) return inner.callTool(name, args, ctx);
      const policy = gate.policies[name] ?? def.approval(args);
      if (policy === "deny") throw new ToolError(`tool "${name}" is denied by the approval policy of worker "${gate.workerChain.at(-1)}"`);
      if (policy === "ask") {
        const key = `${ctx.callPath}/approval`;
        let decision = gate.journal.get<ApprovalDecision>(key);
        if (!decision && gate.mode !== "ask") {
          decision = { approved: gate.mode === "approve_all", by: `approval_mode ${gate.mode}` };
          await gate.journal.record(key, decision);
        }
        if (!decision) {
          throw new ApprovalRequired([
            {
              key,
              id: await approvalId(key),
              callPath: ctx.callPath,
              workerChain: [...gate.workerChain],
              tool: name,
              args,
              description: `${gate.workerChain.join(" → ")} wants to call ${name}`,
              notify: gate.notify,
            },
          ]);
        }
        if (!decision.approved) {
          throw new ToolError(`the call to ${name} was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`);
        }
      }
      return inner.callTool(name, args, ctx);
    },
  };
}
