import type { CallSite } from "./callables";
import { inFrame, openFrame } from "./call-frame";
import type { CatalogWorker } from "./catalog";
import { toolContext } from "./context";
import { messageOf, propagates, RunError, ToolError } from "./errors";
import type { CodeFunction } from "./functions";
import { describeIssues } from "./json-schema";
import type { RunServices } from "./run";

/**
 * Runs one call of a code function: in a call frame like a worker's (depth, its own
 * toolsets behind the approval gate and journal), its input and output checked by
 * its zod schemas. Its `ctx` is a `ToolContext` at the call's path, so each effect
 * is a journal step and a resumed run replays the body onto the same steps.
 */
export async function runFunction(run: RunServices, entry: CatalogWorker, fn: CodeFunction, input: unknown, at: CallSite): Promise<unknown> {
  const frame = openFrame(run, entry, at);
  const parsed = fn.input.safeParse(input);
  if (!parsed.success) throw new RunError("invalid_input", `${entry.file}: input does not match its input schema: ${describeIssues(parsed.error)}`);
  return inFrame(run, frame, async (toolset, state) => {
    let result: unknown;
    try {
      result = await fn.run(parsed.data, toolContext(run, frame, toolset, frame.path, frame.usage, state));
    } catch (err) {
      // Signals pass through; a failure ends this call like a worker's (its caller's tool result).
      if (propagates(err) || err instanceof RunError) throw err;
      // A failed ctx call (a nested call, a rejected approval) already says what failed; the code's own error is named.
      throw new RunError("function_failed", err instanceof ToolError ? err.message : `${entry.file} failed: ${messageOf(err)}`);
    }
    if (!fn.output) return result;
    const checked = fn.output.safeParse(result);
    if (!checked.success) throw new RunError("invalid_output", `${entry.file}: its result does not match its output schema: ${describeIssues(checked.error)}`);
    return checked.data;
  });
}
