import type { CallNode, ToolNode } from "../engine/journal/call-tree";
import { toYaml } from "../engine/yaml-text";
import type { ApprovalView, RunView } from "../runs/types";
import { isoInstant } from "../engine/iso-time";
import { literalPattern } from "./args-pattern";

/** How `prettyValue` marks a result it cut for the run page: such a result cannot stand in for the tool. */
const CUT = /\n… \(\d+ more characters\)$/;

/** The answer of a call the source run has no answer of: replaying it must never run the real tool. */
export const NOT_RECORDED = "not recorded in the source run (the call was pending, or its result was cut)";

/** How many names the YAML header lists, each cut to a line's worth (they are the model's words). */
const LISTED_NAMES = 20;
const LISTED_NAME_CHARS = 60;

interface Stub {
  args: unknown;
  result?: unknown;
  error?: string;
}

/**
 * A recorded run as an eval suite of one case (docs/evals.md, "From a run"): its input,
 * a `tool_called` check for every call it made (by which worker, with which arguments, as literal patterns),
 * its end status, and what each tool answered as a stub, so the case replays the
 * situation offline: a production incident becomes a regression test. Workers it called
 * run again (they are the code under test); their own tool calls are stubbed too.
 */
export const evalSuiteOf = (view: RunView): Record<string, unknown> => exported(view).suite;

/** The same as YAML to commit under evals/, with a header saying where it came from, what is not recorded, and what to check. */
export function evalSuiteYaml(view: RunView): string {
  const { suite, unrecorded } = exported(view);
  return [
    `# From run ${view.id} (${view.status}), made by GET /runs/${view.id}/eval-case.`,
    "# Stubs hold each tool's result as the run page shows it (JSON inside strings unfolded).",
    ...(unrecorded.length
      ? [
          `# Not recorded in the source run (pending, or a result cut): ${listed(unrecorded)}.`,
          "# Their stubs answer an error and the case is reject_all: a worker among them would run again, its tools unstubbed.",
        ]
      : ["# Every call is stubbed, so the case is approve_all: a tool the run did not call would really run."]),
    "# Add a model (or a script) and checks of the output: see docs/evals.md.",
    toYaml(suite),
  ].join("\n");
}

/** The suite, and the names of the calls it has no recorded answer of. */
function exported(view: RunView): { suite: Record<string, unknown>; unrecorded: string[] } {
  const calls = view.call_tree ? toolCalls(view.call_tree) : [];
  const { tools, unrecorded } = stubsOf(calls.map(({ tool }) => tool));
  const ended = view.status === "succeeded" || view.status === "failed";
  const decisions = (view.approvals ?? []).filter((a) => a.decided_at !== null && a.status !== "voided").map(decisionOf);
  const suite = {
    worker: view.worker,
    cases: [
      {
        name: `run ${view.id}`,
        input: view.input,
        // approve_all only when every call has its recorded answer; else a worker that
        // never ran, or a call paused at its approval, must not be approved on replay.
        approval_mode: unrecorded.length ? "reject_all" : "approve_all",
        ...(Object.keys(tools).length ? { tools } : {}),
        ...(decisions.length ? { decisions } : {}),
        checks: [
          ...(ended ? [{ status: view.status }] : []),
          ...calls.map(({ worker, tool }) => ({ tool_called: { name: tool.name, worker, args: literalPattern(tool.args) } })),
        ],
      },
    ],
  };
  return { suite, unrecorded };
}

/**
 * A stub for every tool call (workers that ran run again: they are under test). A call
 * with no answer to replay (pending, or cut) gets an error stub: a tool with any stub
 * never runs for real. `unrecorded` names those calls; one may be a worker that had not
 * started, which no stub holds back.
 */
function stubsOf(calls: ToolNode[]): { tools: Record<string, Stub[]>; unrecorded: string[] } {
  // By a Map: a name is the model's, and may be `__proto__` or `constructor`, which a plain object already answers.
  const tools = new Map<string, Stub[]>();
  const unrecorded = new Set<string>();
  for (const tool of calls) {
    if (tool.calls.length) continue;
    const stub = recordedStub(tool);
    if (!stub) unrecorded.add(tool.name);
    const stubs = tools.get(tool.name) ?? [];
    stubs.push(stub ?? { args: literalPattern(tool.args), error: NOT_RECORDED });
    tools.set(tool.name, stubs);
  }
  return { tools: Object.fromEntries(tools), unrecorded: [...unrecorded] };
}

/**
 * A decision of the source run with its audit: the call, how it ended (approved, edited,
 * denied after an edit, rejected, responded, answered, expired), who (`by`: the words of the
 * run page; `email` and `via` when a person decided), when, on which arguments, and what
 * the person put in the call's place. The case keeps it as a record; nothing replays it.
 */
function decisionOf(a: ApprovalView): Record<string, unknown> {
  const outcome =
    a.kind === "question"
      ? a.status === "approved"
        ? "answered"
        : a.status
      : a.denied !== null
        ? "denied"
        : a.status === "approved" && a.edited_args !== null
          ? "edited"
          : a.status;
  return {
    tool: a.tool,
    call: a.call_path,
    outcome,
    by: a.decided_by,
    ...(a.by ? { email: a.by.email, via: a.by.via } : {}),
    at: isoInstant(a.decided_at!) ?? a.decided_at,
    ...(a.args_sha256 ? { args_sha256: a.args_sha256 } : {}),
    ...(a.note ? { note: a.note } : {}),
    ...(a.edited_args !== null ? { edited_args: a.edited_args } : {}),
    ...(a.denied !== null ? { denied: a.denied } : {}),
    ...(a.response !== null ? { response: a.response } : {}),
    ...(a.answer !== null ? { answer: a.answer } : {}),
  };
}

/** Names as one comment line: JSON strings (no line break survives), cut, ASCII only. */
function listed(names: string[]): string {
  const shown = names
    .slice(0, LISTED_NAMES)
    .map((n) => JSON.stringify(n.slice(0, LISTED_NAME_CHARS)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
  return [...shown, ...(names.length > LISTED_NAMES ? [`and ${names.length - LISTED_NAMES} more`] : [])].join(", ");
}

function toolCalls(node: CallNode): Array<{ worker: string; tool: ToolNode }> {
  return node.tools.flatMap((tool) => [{ worker: node.worker, tool }, ...tool.calls.flatMap(toolCalls)]);
}

/** A tool's recorded answer, unless it never came or was cut (for the page or the journal). */
function recordedStub(tool: ToolNode): Stub | undefined {
  if (tool.status === "pending" || tool.truncatedFrom !== undefined) return undefined;
  if (tool.status === "error") return { args: literalPattern(tool.args), error: tool.error ?? "failed" };
  if (tool.result === undefined || CUT.test(tool.result)) return undefined;
  return { args: literalPattern(tool.args), result: parsed(tool.result) };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
