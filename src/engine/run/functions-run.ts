import { inFrame, openFrame, type CallServices } from "./call-frame";
import { toolContext } from "./context";
import { messageOf, propagates, RunError, ToolError } from "../errors";
import { describeIssues } from "../json-schema";
import { MAX_STEP_BYTES, stepBytes } from "../journal/bounds";
import { boundContext, SignalBoundary } from "./signal-boundary";
import type { CallSite } from "../types/callable";
import type { CatalogWorker, CodeFunction } from "../types/worker";

/**
 * Runs one call of a code function: in a call frame like a worker's (depth, its own
 * toolsets behind the approval gate and journal), its input and output checked by
 * its zod schemas. Its `ctx` is a `ToolContext` at the call's path, so each effect
 * is a journal step and a resumed run replays the body onto the same steps. The body
 * runs inside a `SignalBoundary`: a pause or hand-off never reaches it as an error.
 */
export async function runFunction(run: CallServices, entry: CatalogWorker, fn: CodeFunction, input: unknown, at: CallSite): Promise<unknown> {
  const frame = openFrame(run, entry, at);
  const parsed = fn.input.safeParse(input);
  if (!parsed.success) throw new RunError("invalid_input", `${entry.file}: input does not match its input schema: ${describeIssues(parsed.error)}`);
  return inFrame(run, frame, async (toolset, state) => {
    const boundary = new SignalBoundary();
    const ctx = boundContext(toolContext(run, frame, toolset, frame.path, frame.usage, state), boundary);
    let result: unknown;
    try {
      result = await boundary.run(() => fn.run(parsed.data, ctx));
    } catch (err) {
      // Signals pass through; a failure ends this call like a worker's (its caller's tool result).
      if (propagates(err) || err instanceof RunError) throw err;
      // A failed ctx call (a nested call, a rejected approval) already says what failed; the code's own error is named.
      throw new RunError("function_failed", err instanceof ToolError ? err.message : `${entry.file} failed: ${messageOf(err)}`, false, { cause: err });
    }
    if (fn.output) {
      const checked = fn.output.safeParse(result);
      if (!checked.success)
        throw new RunError("invalid_output", `${entry.file}: its result does not match its output schema: ${describeIssues(checked.error)}`);
      result = checked.data;
    }
    return storable(entry.file, frame.path, result);
  });
}

/**
 * A result is kept as JSON (a run's output row, a caller's journal step): one that
 * cannot be, or is larger than a step may be, fails the call instead of every later
 * attempt to store it.
 */
function storable(file: string, path: string, result: unknown): unknown {
  let bytes: number;
  try {
    bytes = stepBytes(path, result);
  } catch (err) {
    throw new RunError("invalid_output", `${file}: its result is not JSON: ${messageOf(err)}`, false, { cause: err });
  }
  if (bytes > MAX_STEP_BYTES)
    throw new RunError(
      "too_large",
      `${file}: its result is ${bytes} bytes as JSON, over the journal's bound of ${MAX_STEP_BYTES} bytes; return less, or write it with a tool`,
    );
  return result;
}
