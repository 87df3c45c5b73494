import type { ToolContext } from "../../types/context";
import { ToolError } from "../../errors";
import { stableJson } from "../../ids";
import type { Journal } from "../../journal/journal";
import { parseKey } from "../../journal/keys";
import { askApproval, type ApprovalDecision, type ApprovalHost } from "../../approvals/ask-approval";
import { LatestListing } from "../latest-listing";
import type { DeciderPolicy } from "../../types/deciders";
import { API_DECIDER } from "../../approvals/deciders";
import type { Policy, ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

export type ApprovalMode = "ask" | "approve_all" | "reject_all";

export interface ApprovalGate {
  journal: Journal;
  mode: ApprovalMode;
  /** Exposed tool name → policy, from the worker file; wins over the kind's default. */
  policies: Readonly<Record<string, Policy>>;
  workerChain: readonly string[];
  notify?: string;
  /** Exposed tool name → who may decide its approvals. */
  deciders?: Readonly<Record<string, DeciderPolicy>>;
  host: ApprovalHost;
  /** Signatures (`callSignature`) of calls approved "for the rest of the run". */
  remembered: ReadonlySet<string>;
}

/** Same worker, same tool, same arguments. */
export const callSignature = (worker: string, tool: string, args: unknown) => `${worker}\u0000${tool}\u0000${stableJson(args)}`;

/**
 * `approval_mode: approve_all` is set with the API token when a run starts: it approves
 * a call whose policy names people only if that policy admits the API token too.
 */
const modeMayApprove = (policy: DeciderPolicy | undefined) => !policy?.ask || policy.ask.includes(API_DECIDER);

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
 * journal (`askApproval`) or suspends the run. A rejection is the tool's result,
 * so the model can adapt; so is a person's answer in the call's place. An approval
 * with edited arguments runs the tool with those.
 */
export class ApprovalGated extends WrapperToolset {
  // Looked up by every tool call, without waiting once listed.
  private readonly defs = new LatestListing(async () => new Map((await this.inner.listTools()).map((d) => [d.name, d])));

  constructor(
    inner: Toolset,
    private readonly gate: ApprovalGate,
  ) {
    super(inner);
  }

  // Each listing refreshes the map, so a tool added since (a created worker) is gated by its own definition.
  override async listTools(): Promise<ToolDef[]> {
    return [...(await this.defs.refresh()).values()];
  }

  override callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    // Listed and allowed (most calls): straight through, without a frame of ours.
    const def = this.defs.current?.get(name);
    return def && this.allowed(def, args) ? this.inner.callTool(name, args, ctx) : this.gated(name, args, ctx);
  }

  private policyOf(def: ToolDef, args: unknown): Policy {
    return this.gate.policies[def.name] ?? def.approval(args);
  }

  /** A policy function that throws is not "allow": `gated` calls it again, and its error fails the call. */
  private allowed(def: ToolDef, args: unknown): boolean {
    try {
      return this.policyOf(def, args) === "allow";
    } catch {
      return false;
    }
  }

  private async gated(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const { gate } = this;
    const def = (await this.defs.get()).get(name);
    // Nothing to gate: the inner toolset answers with the list of known tools.
    if (!def) return this.inner.callTool(name, args, ctx);
    const policy = this.policyOf(def, args);
    const worker = gate.workerChain.at(-1)!;
    if (policy === "deny") throw new ToolError(`tool "${name}" is denied by the approval policy of worker "${worker}"`);
    if (policy === "ask") {
      const decision = await askApproval({
        journal: gate.journal,
        host: gate.host,
        callPath: ctx.callPath,
        asked: {
          workerChain: [...gate.workerChain],
          tool: name,
          args,
          description: `${gate.workerChain.join(" → ")} wants to call ${name}`,
          notify: gate.notify,
          ...(gate.deciders?.[name] ? { deciders: gate.deciders[name] } : {}),
          // What an approver's edit is checked against; none when the policy forbids edits.
          ...(gate.deciders?.[name]?.editable === false ? {} : { inputSchema: def.parameters }),
        },
        decideWithoutAsking: () =>
          gate.remembered.has(callSignature(worker, name, args))
            ? { approved: true, by: "an earlier approval of this same call" }
            : gate.mode === "reject_all" || (gate.mode === "approve_all" && modeMayApprove(gate.deciders?.[name]))
              ? { approved: gate.mode === "approve_all", by: `approval_mode ${gate.mode}` }
              : undefined,
      });
      // A person's answer is the call's result: the tool never runs (the loop tells the model whose it is).
      if (typeof decision.response === "string") return decision.response;
      if (!decision.approved) throw new ToolError(`the call to ${name} was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`);
      // Edited: the arguments recorded with the decision, on every replay too.
      if (decision.args !== undefined) return this.inner.callTool(name, decision.args, ctx);
    }
    return this.inner.callTool(name, args, ctx);
  }
}

export const approvalGated = (inner: Toolset, gate: ApprovalGate): Toolset => new ApprovalGated(inner, gate);
