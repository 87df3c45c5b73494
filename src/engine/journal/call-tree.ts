import type { AttachmentRecord } from "../attachments/resolve";
import { ATTACHMENTS_STEP, KEY_GRAMMAR, lastSegment, parentPath, parseKey, toolCallKeys, undonePath, type KeyGrammar } from "./keys";
import type { RecordedUndo } from "../toolsets/wrappers/compensable";
import type { RecordedResponse } from "../run/model-step";
import type { RecordedCall } from "../toolsets/wrappers/journaled";
import { prettyValue } from "../toolsets/unfold-json";
import { boundedUsage, emptyUsage } from "../run/usage";
import type { ChildEnd } from "../types/children";
import type { Usage } from "../types/usage";
import type { ApprovalDecision } from "../approvals/ask-approval";
import type { Decider } from "../types/deciders";

export interface ToolNode {
  /** The model's id for the call: data, shown; `path` is its key. */
  id: string;
  name: string;
  path: string;
  args: unknown;
  /** `pending`: no result yet (running, or waiting for approval). */
  status: "ok" | "error" | "pending";
  /** The result as a person reads it (JSON inside strings unfolded, pretty-printed), cut to 2000 characters. */
  result?: string;
  error?: string;
  /** Set when the outcome was cut to fit the journal: its full size in bytes. */
  truncatedFrom?: number;
  /** Set when a person edited the call before approving it: the arguments it ran with (`args`: the model's), and who. */
  edited?: { args: unknown; by: Decider | null; denied?: string };
  /** Set when a person answered in place of the call (it never ran): the result is theirs. */
  answeredBy?: { by: Decider | null };
  /**
   * What undoes the call's effect (`compensate:`): the tool and arguments, and whether the undo
   * was made (`ok`/`error`, when the run failed) or not (`not_made`: the run did not fail, or
   * has not reached it; `skipped`: it could not be made, `error` says why).
   */
  undo?: { tool: string; args?: unknown; status: "ok" | "error" | "not_made" | "skipped"; result?: string; error?: string };
  /** Files given to the worker this tool called: names, types, sizes (never bytes). */
  attachments?: AttachmentRecord[];
  calls: CallNode[];
}

export interface CallNode {
  worker: string;
  path: string;
  turns: number;
  /** This call's own model usage, and that of the child runs it started that ended (nested calls are in their own nodes). */
  usage: Usage;
  tools: ToolNode[];
}

/**
 * The call tree of a run — nested workers and their tool calls — derived from its
 * journal alone, so it needs no bookkeeping of its own and is right after replay.
 * `grammar`: the key grammar the run's journal is written in.
 */
export function callTree(entries: Iterable<[string, unknown]>, grammar: KeyGrammar = KEY_GRAMMAR): CallNode | null {
  const calls = new Map<string, CallNode>();
  const tools = new Map<string, ToolNode>();
  const results = new Map<string, RecordedCall>();
  const attachments = new Map<string, AttachmentRecord[]>();
  const decisions = new Map<string, ApprovalDecision>();
  const undos = new Map<string, RecordedUndo>();
  const childEnds: Array<[string, Usage]> = [];
  for (const [key, value] of entries) {
    const k = parseKey(key);
    if (k.kind === "model") {
      const { frame: path, turn } = k;
      let call = calls.get(path);
      if (!call) calls.set(path, (call = { worker: workerName(path), path, turns: 0, usage: emptyUsage(), tools: [] }));
      const res = value as RecordedResponse;
      call.turns = Math.max(call.turns, turn);
      addUsage(call.usage, usageOf(res));
      toolCallKeys(grammar, path, turn, res.toolCalls).forEach((toolPath, i) => {
        const tc = res.toolCalls[i]!;
        const node: ToolNode = { id: tc.id, name: tc.name, path: toolPath, args: parseArgs(tc.arguments), status: "pending", calls: [] };
        tools.set(toolPath, node);
        call!.tools.push(node);
      });
    } else if (k.kind === "effect" && k.effect === "ask") {
      // A summary that compacted a worker's history (run/compaction.ts) is that worker call's spending.
      const compacted = parseKey(k.call);
      const call = compacted.kind === "compact" ? calls.get(compacted.frame) : undefined;
      if (call) addUsage(call.usage, usageOf(value as RecordedResponse));
    } else if (k.kind === "step" && k.name === ATTACHMENTS_STEP) {
      attachments.set(k.call, value as AttachmentRecord[]);
    } else if (k.kind === "result") {
      results.set(k.call, value as RecordedCall);
    } else if (k.kind === "approval") {
      decisions.set(k.call, value as ApprovalDecision);
    } else if (k.kind === "undo") {
      undos.set(k.call, value as RecordedUndo);
    } else if (k.kind === "child_end") {
      const used = boundedUsage((value as Partial<ChildEnd> | null)?.usage);
      if (used) childEnds.push([k.spawn, used]);
    }
  }
  // A child run's usage is its spawning call's (as the run's total counts it): the nearest worker call above the spawn.
  for (const [spawn, used] of childEnds) {
    let path = parentPath(spawn);
    while (path !== undefined && !calls.has(path)) path = parentPath(path);
    const call = path === undefined ? undefined : calls.get(path);
    if (call) addUsage(call.usage, used);
  }
  for (const [path, r] of results) {
    const tool = tools.get(path);
    if (!tool) continue;
    tool.status = r.ok ? "ok" : "error";
    if (r.ok) tool.result = prettyValue(r.value, 2000);
    else tool.error = r.error;
    if (r.truncatedFrom !== undefined) tool.truncatedFrom = r.truncatedFrom;
  }
  for (const [path, d] of decisions) {
    const tool = tools.get(path);
    if (!tool) continue;
    if (typeof d.response === "string") tool.answeredBy = { by: d.decider ?? null };
    else if (d.approved && d.args !== undefined) {
      // An edit into what a deny rule refuses never ran: the call shows refused, and why.
      const r = results.get(path);
      tool.edited = { args: d.args, by: d.decider ?? null, ...(r && !r.ok && r.denied ? { denied: r.error } : {}) };
    }
  }
  for (const [path, u] of undos) {
    const tool = tools.get(path);
    if (!tool) continue;
    const made = results.get(undonePath(path));
    const status = made ? (made.ok ? "ok" : "error") : u.error !== undefined ? "skipped" : "not_made";
    tool.undo = { tool: u.tool, ...(u.args ? { args: u.args } : {}), status };
    if (made?.ok) tool.undo.result = prettyValue(made.value, 600);
    const error = made && !made.ok ? made.error : u.error;
    if (error !== undefined) tool.undo.error = error;
  }
  for (const [path, list] of attachments) {
    const tool = tools.get(path);
    if (tool) tool.attachments = list;
  }
  let root: CallNode | null = null;
  for (const call of calls.values()) {
    const parent = nearestTool(call.path, tools);
    if (parent) parent.calls.push(call);
    else root ??= call;
  }
  return root;
}

function nearestTool(path: string, tools: Map<string, ToolNode>): ToolNode | undefined {
  for (let up = parentPath(path); up !== undefined; up = parentPath(up)) {
    const t = tools.get(up);
    if (t) return t;
  }
  return undefined;
}

/** `a/turn:1/tool:x/summarizer` → summarizer; an `llmAgent` call (`…/agent:3`) → agent. */
export function workerName(path: string): string {
  const p = parseKey(path);
  return p.kind === "effect" ? p.effect : lastSegment(path);
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const usageOf = (res: RecordedResponse): Usage => ({
  requests: 1,
  inputTokens: res.usage.inputTokens,
  outputTokens: res.usage.outputTokens,
  costUsd: res.costUsd,
});

function addUsage(total: Usage, u: Usage): void {
  total.requests += u.requests;
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  total.costUsd += u.costUsd;
}
