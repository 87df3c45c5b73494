import type { CallNode, ToolNode } from "../engine/journal/call-tree";
import { toYaml } from "../engine/yaml-text";
import type { RunView } from "../runs/types";

/** How `prettyValue` marks a result it cut for the run page: such a result cannot stand in for the tool. */
const CUT = /\n… \(\d+ more characters\)$/;

interface Stub {
  args: unknown;
  result?: unknown;
  error?: string;
}

/**
 * A recorded run as an eval suite of one case (docs/evals.md, "From a run"): its input,
 * a `tool_called` check for every call it made (by which worker, with which arguments),
 * its end status, and what each tool answered as a stub, so the case replays the
 * situation offline: a production incident becomes a regression test. Workers it called
 * run again (they are the code under test); their own tool calls are stubbed too.
 */
export function evalSuiteOf(view: RunView): Record<string, unknown> {
  const calls = view.call_tree ? toolCalls(view.call_tree) : [];
  const tools: Record<string, Stub[]> = {};
  for (const { tool } of calls) {
    const stub = stubOf(tool);
    if (stub) (tools[tool.name] ??= []).push(stub);
  }
  const ended = view.status === "succeeded" || view.status === "failed";
  return {
    worker: view.worker,
    cases: [
      {
        name: `run ${view.id}`,
        input: view.input,
        // Every tool the run called answers from its stubs; one it did not call would really run.
        approval_mode: "approve_all",
        ...(Object.keys(tools).length ? { tools } : {}),
        checks: [
          ...(ended ? [{ status: view.status }] : []),
          ...calls.map(({ worker, tool }) => ({ tool_called: { name: tool.name, worker, args: tool.args } })),
        ],
      },
    ],
  };
}

/** The same as YAML to commit under evals/, with a header saying where it came from and what to check. */
export function evalSuiteYaml(view: RunView): string {
  return [
    `# From run ${view.id} (${view.status}), made by GET /runs/${view.id}/eval-case.`,
    "# Stubs hold each tool's result as the run page shows it (JSON inside strings unfolded);",
    "# a result cut for the page has no stub. approve_all: a tool the run did not call would really run.",
    "# Add a model (or a script) and checks of the output: see docs/evals.md.",
    toYaml(evalSuiteOf(view)),
  ].join("\n");
}

function toolCalls(node: CallNode): Array<{ worker: string; tool: ToolNode }> {
  return node.tools.flatMap((tool) => [{ worker: node.worker, tool }, ...tool.calls.flatMap(toolCalls)]);
}

/** A worker's call runs again; a tool's answer is replayed, unless it was cut or never came. */
function stubOf(tool: ToolNode): Stub | undefined {
  if (tool.calls.length || tool.status === "pending") return undefined;
  if (tool.status === "error") return { args: tool.args, error: tool.error ?? "failed" };
  if (tool.result === undefined || CUT.test(tool.result)) return undefined;
  return { args: tool.args, result: parsed(tool.result) };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
