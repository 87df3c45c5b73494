import { takeAttachments } from "../../attachments/parameter";
import { resolveAttachments, type AttachmentSources } from "../../attachments/resolve";
import { callableTool } from "../../catalog/callables";
import { ToolError } from "../../errors";
import { describeIssues, validatorFor } from "../../json-schema";
import { calleePath } from "../../journal/keys";
import type { CallFrame, Callables } from "../../types/callable";
import type { Toolset } from "../../types/toolset";

/**
 * The workers and functions a worker lists under `toolsets.workers` (or, given
 * `names`, the workers its call created), each a tool named after it, resolved
 * through `run.callables`. Calling one runs it with fresh history, one level deeper;
 * attachments it is passed are read from the caller's files or fetched (`run`'s sources).
 * With `run: child` each call is a child run instead (`ctx.spawn`), whose end the call waits for durably.
 */
export function workersToolset(
  run: AttachmentSources & { readonly callables: Callables },
  frame: CallFrame,
  names: () => readonly string[] = () => frame.worker.workerTools,
  id = "toolsets.workers",
): Toolset {
  const callees = () => names().flatMap((n) => run.callables.get(n) ?? []);
  const child = id === "toolsets.workers" && frame.worker.workersRun === "child";
  return {
    id,
    listTools: async () => callees().map(callableTool),
    async callTool(name, args, ctx) {
      const callee = callees().find((c) => c.name === name);
      if (!callee) throw new ToolError(`unknown worker tool "${name}"`);
      const { args: input, refs } = takeAttachments(callee, args);
      const parsed = validatorFor(callee.input).safeParse(input);
      if (!parsed.success) throw new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
      // `run: child` (the caller's own list, never the workers its call created): a run of its own, waited for durably.
      if (child) {
        if (refs.length) throw new ToolError(`${name} runs as a child run, which takes no attachments: pass what it needs in its input`);
        return (await ctx.spawn(name, parsed.data)).result();
      }
      const attachments = refs.length ? await resolveAttachments(run, frame, callee, refs, ctx) : undefined;
      return callee.call(parsed.data, { path: calleePath(ctx.callPath, name), parent: frame, usage: ctx.usage, attachments });
    },
  };
}
