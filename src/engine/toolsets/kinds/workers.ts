import { takeAttachments, withAttachmentsParameter } from "../../attachments/parameter";
import { resolveAttachments } from "../../attachments/resolve";
import { workerToolDef } from "../../catalog";
import { ToolError } from "../../errors";
import { describeIssues, validatorFor } from "../../json-schema";
import { runWorker, type CallFrame } from "../../loop";
import type { RunServices } from "../../run";
import type { Toolset } from "../toolset";

/**
 * The workers a worker lists under `toolsets.workers`, each a tool named after it.
 * Calling one runs that worker with fresh history, one level deeper.
 */
export function workersToolset(run: RunServices, frame: CallFrame): Toolset {
  const workers = frame.worker.workerTools.map((n) => run.catalog.get(n)!);
  return {
    id: "toolsets.workers",
    listTools: async () => workers.map((w) => withAttachmentsParameter(workerToolDef(w), w)),
    async callTool(name, args, ctx) {
      const worker = workers.find((w) => w.name === name);
      if (!worker) throw new ToolError(`unknown worker tool "${name}"`);
      const { args: input, refs } = takeAttachments(worker, args);
      const parsed = validatorFor(worker.input).safeParse(input);
      if (!parsed.success) throw new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
      const attachments = refs.length ? await resolveAttachments(run, frame, worker, refs, ctx) : undefined;
      return runWorker(run, worker, parsed.data, { path: `${ctx.callPath}/${name}`, parent: frame, usage: ctx.usage, attachments });
    },
  };
}
