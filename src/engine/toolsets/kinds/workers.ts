import type { CallFrame } from "../../call-frame";
import { callableTool } from "../../callables";
import { ToolError } from "../../errors";
import { describeIssues, validatorFor } from "../../json-schema";
import type { RunServices } from "../../run";
import type { Toolset } from "../toolset";

/**
 * The workers and functions a worker lists under `toolsets.workers`, each a tool
 * named after it, resolved through `run.callables`. Calling one runs it with fresh
 * history, one level deeper.
 */
export function workersToolset(run: RunServices, frame: CallFrame): Toolset {
  const callees = frame.worker.workerTools.map((n) => run.callables.get(n)!);
  return {
    id: "toolsets.workers",
    listTools: async () => callees.map(callableTool),
    async callTool(name, args, ctx) {
      const callee = callees.find((c) => c.name === name);
      if (!callee) throw new ToolError(`unknown worker tool "${name}"`);
      const parsed = validatorFor(callee.input).safeParse(args);
      if (!parsed.success) throw new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
      return callee.call(parsed.data, { path: `${ctx.callPath}/${name}`, parent: frame, usage: ctx.usage });
    },
  };
}
