import type { ToolContext } from "../../types/context";
import { DeniedByPolicy, nondeterministic, ToolError } from "../../errors";
import { stableJson } from "../../ids";
import type { Journal } from "../../journal/journal";
import { callFingerprint } from "../../journal/fingerprint";
import { approvalRuleKey, parseKey } from "../../journal/keys";
import { askApproval, type ApprovalDecision, type ApprovalHost } from "../../approvals/ask-approval";
import { codePolicy, policyNow, type CallPolicy } from "../../approvals/call-policy";
import { LatestListing } from "../latest-listing";
import type { DeciderPolicy } from "../../types/deciders";
import { API_DECIDER } from "../../approvals/deciders";
import type { ToolPolicy } from "../../types/arg-rules";
import type { ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

export type ApprovalMode = "ask" | "approve_all" | "reject_all";

export interface ApprovalGate {
  journal: Journal;
  mode: ApprovalMode;
  /** Exposed tool name → policy (or rules on the arguments), from the worker file; wins over the kind's default. */
  policies: Readonly<Record<string, ToolPolicy>>;
  workerChain: readonly string[];
  notify?: string;
  /** Exposed tool name → who may decide its approvals. */
  deciders?: Readonly<Record<string, DeciderPolicy>>;
  host: ApprovalHost;
  /** Signatures (`callSignature`) of calls approved "for the rest of the run". */
  remembered: ReadonlySet<string>;
}

/**
 * Same worker, same tool, same arguments, asked under the same rule (none: the tool's
 * plain policy or its kind's default): an approval remembered under one rule never
 * covers a call another rule asks about. Undefined for arguments JSON cannot hold
 * (nested past the stack): such a call is remembered by nothing.
 */
export function callSignature(worker: string, tool: string, args: unknown, rule = ""): string | undefined {
  try {
    return `${worker}\u0000${tool}\u0000${rule}\u0000${stableJson(args)}`;
  } catch {
    return undefined;
  }
}

/** What `<call>/approval-rule` records: the rule a call asked under, and the call (`name`, `fp`), so a replay that meets another call there fails. */
export interface RecordedRule {
  rule: string;
  /** Why it failed closed, when it did (shown to the approver). */
  unsure?: string;
  name: string;
  fp?: number;
}

/** Longest rule text put into an approval's description (the subject of its email); the whole rule is in the journal. */
const SHOWN_RULE = 120;
const shortRule = (rule: string) => (rule.length > SHOWN_RULE ? `${rule.slice(0, SHOWN_RULE)}…` : rule);

/**
 * `approval_mode: approve_all` is set with the API token when a run starts: it approves
 * a call whose policy names people only if that policy admits the API token too.
 */
const modeMayApprove = (policy: DeciderPolicy | undefined) => !policy?.ask || policy.ask.includes(API_DECIDER);

/** Every "approve identical calls" decision recorded in a journal, under the rule its call asked under. */
export function rememberedApprovals(journal: Journal): Set<string> {
  const set = new Set<string>();
  for (const [key, value] of journal.entries()) {
    // Any step's value (null too): the key is parsed only for an approved decision to remember.
    const d = value as ApprovalDecision | null;
    if (!d?.approved || !d.remember) continue;
    const k = parseKey(key);
    if (k.kind !== "approval") continue;
    const signature = callSignature(d.remember.worker, d.remember.tool, d.remember.args, journal.get<RecordedRule>(approvalRuleKey(k.call))?.rule);
    if (signature !== undefined) set.add(signature);
  }
  return set;
}

/** The static policy for `args` (a rule that cannot be read fails closed: deny rules deny). */
function policyNowOrAsk(policy: Parameters<typeof policyNow>[0], def: ToolDef, args: unknown): Pick<CallPolicy, "policy" | "rule"> {
  try {
    return policyNow(policy, def, args) ?? { policy: "ask" };
  } catch {
    return { policy: "deny" };
  }
}

/**
 * Approval gating as a wrapper: `deny` refuses, `ask` needs a decision in the
 * journal (`askApproval`) or suspends the run. A rejection is the tool's result,
 * so the model can adapt; so is a person's answer in the call's place. An approval
 * with edited arguments runs the tool with those. An ask under a rule (rules on the
 * arguments, the tool's `needsApproval`) is recorded first: a replay asks again under
 * that rule, whatever the rule or the code would say now.
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
    return def && this.allowed(def, args, ctx) ? this.inner.callTool(name, args, ctx) : this.gated(name, args, ctx);
  }

  /** Allowed without waiting: never asked before, and a policy known at once allows it. One that throws is not "allow": `gated` asks again, and its error fails the call. */
  private allowed(def: ToolDef, args: unknown, ctx: ToolContext): boolean {
    const entry = this.gate.policies[def.name];
    // Only a policy with rules, or a tool's needsApproval, records the rule a call asked under.
    const ruled = def.needsApproval !== undefined || (entry !== undefined && typeof entry !== "string");
    if (ruled && this.gate.journal.get(approvalRuleKey(ctx.callPath)) !== undefined) return false;
    try {
      return policyNow(entry, def, args)?.policy === "allow";
    } catch {
      return false;
    }
  }

  /** The call's policy: the rule it asked under when recorded, else the policy now (the tool's code's, awaited). */
  private async policyOf(def: ToolDef, args: unknown, ctx: ToolContext): Promise<CallPolicy> {
    const key = approvalRuleKey(ctx.callPath);
    const fp = callFingerprint(ctx, args);
    const recorded = this.gate.journal.get<RecordedRule>(key);
    if (recorded) {
      if (recorded.name !== def.name || recorded.fp !== fp)
        throw nondeterministic(
          key,
          `an ask of ${recorded.name} under ${recorded.rule}`,
          `a call of ${def.name}${fp === undefined ? "" : ` with arguments #${fp.toString(36)}`}`,
        );
      return { policy: "ask", rule: recorded.rule, ...(recorded.unsure ? { unsure: recorded.unsure } : {}) };
    }
    const { workerChain } = this.gate;
    const now =
      policyNow(this.gate.policies[def.name], def, args) ??
      (await codePolicy(def, args, { runId: ctx.runId, callPath: ctx.callPath, depth: ctx.depth, workerChain: [...workerChain], tool: def.name }));
    if (now.policy === "ask" && now.rule !== undefined) {
      const record: RecordedRule = { rule: now.rule, ...(now.unsure ? { unsure: now.unsure } : {}), name: def.name, ...(fp === undefined ? {} : { fp }) };
      await this.gate.journal.step(key, () => record);
    }
    return now;
  }

  private async gated(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const { gate } = this;
    const def = (await this.defs.get()).get(name);
    // Nothing to gate: the inner toolset answers with the list of known tools.
    if (!def) return this.inner.callTool(name, args, ctx);
    const { policy, rule, unsure } = await this.policyOf(def, args, ctx);
    const worker = gate.workerChain.at(-1)!;
    const because = rule === undefined ? "" : ` (${shortRule(rule)}${unsure ? `; ${unsure}` : ""})`;
    if (policy === "deny") throw new DeniedByPolicy(`tool "${name}" is denied by the approval policy of worker "${worker}"${because}`);
    if (policy === "ask") {
      const decision = await askApproval({
        journal: gate.journal,
        host: gate.host,
        callPath: ctx.callPath,
        asked: {
          workerChain: [...gate.workerChain],
          tool: name,
          args,
          description: `${gate.workerChain.join(" → ")} wants to call ${name}${because}`,
          notify: gate.notify,
          ...(gate.deciders?.[name] ? { deciders: gate.deciders[name] } : {}),
          // What an approver's edit is checked against; none when the policy forbids edits.
          ...(gate.deciders?.[name]?.editable === false ? {} : { inputSchema: def.parameters }),
        },
        decideWithoutAsking: () =>
          gate.remembered.size && gate.remembered.has(callSignature(worker, name, args, rule) ?? "")
            ? { approved: true, by: `an earlier approval of this same call${rule === undefined ? "" : ` under ${shortRule(rule)}`}` }
            : gate.mode === "reject_all" || (gate.mode === "approve_all" && modeMayApprove(gate.deciders?.[name]))
              ? { approved: gate.mode === "approve_all", by: `approval_mode ${gate.mode}` }
              : undefined,
      });
      // A person's answer is the call's result: the tool never runs (the loop tells the model whose it is).
      if (typeof decision.response === "string" || decision.args !== undefined) gate.journal.noteChangedByPerson(ctx.callPath);
      if (typeof decision.response === "string") return decision.response;
      if (!decision.approved) throw new ToolError(`the call to ${name} was rejected by ${decision.by}${decision.note ? `: ${decision.note}` : ""}`);
      // Edited: the arguments recorded with the decision, on every replay too — never past a deny rule they match.
      if (decision.args !== undefined) {
        const edited = policyNowOrAsk(gate.policies[name], def, decision.args);
        if (edited.policy === "deny")
          throw new DeniedByPolicy(
            `the edited call to ${name} is denied by the approval policy of worker "${worker}"${edited.rule === undefined ? "" : ` (${shortRule(edited.rule)})`}`,
          );
        return this.inner.callTool(name, decision.args, ctx);
      }
    }
    return this.inner.callTool(name, args, ctx);
  }
}

export const approvalGated = (inner: Toolset, gate: ApprovalGate): Toolset => new ApprovalGated(inner, gate);
