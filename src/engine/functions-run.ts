import type { CallSite } from "./callables";
import { inFrame, openFrame } from "./call-frame";
import type { CatalogWorker } from "./catalog";
import { EFFECT_METHODS, toolContext, type ToolContext } from "./context";
import { contextWith } from "./context-with";
import { messageOf, propagates, RunError, ToolError } from "./errors";
import type { CodeFunction } from "./functions";
import { describeIssues } from "./json-schema";
import { MAX_STEP_BYTES, stepBytes } from "./journal/bounds";
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
    const body = watched(toolContext(run, frame, toolset, frame.path, frame.usage, state));
    let result: unknown;
    try {
      result = await fn.run(parsed.data, body.ctx);
    } catch (err) {
      // Signals pass through; a failure ends this call like a worker's (its caller's tool result).
      if (body.signal) throw body.signal;
      if (propagates(err) || err instanceof RunError) throw err;
      // A failed ctx call (a nested call, a rejected approval) already says what failed; the code's own error is named.
      throw new RunError("function_failed", err instanceof ToolError ? err.message : `${entry.file} failed: ${messageOf(err)}`);
    }
    // The body caught a signal (a pause, a hand-off) and went on: its result is not the call's. Replay runs it again.
    if (body.signal) throw body.signal;
    if (fn.output) {
      const checked = fn.output.safeParse(result);
      if (!checked.success) throw new RunError("invalid_output", `${entry.file}: its result does not match its output schema: ${describeIssues(checked.error)}`);
      result = checked.data;
    }
    return storable(entry.file, frame.path, result);
  });
}

/**
 * `ctx` for a function's body, noting the first signal (a pause for approval, a model
 * request handed off, a checkpoint, a fatal error) that leaves one of its calls: code
 * that catches every error around `ctx.llmAsk` or `ctx.callTool` would otherwise
 * return a fallback for a call that never failed, and have it recorded.
 */
function watched(ctx: ToolContext): { ctx: ToolContext; readonly signal: unknown } {
  const seen: { signal: unknown; ctx: ToolContext } = { signal: undefined, ctx };
  const watch =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        if (propagates(err)) seen.signal ??= err;
        throw err;
      }
    };
  const methods = EFFECT_METHODS.map((m) => [m, watch(ctx[m] as (...args: unknown[]) => Promise<unknown>)]);
  seen.ctx = contextWith(ctx, Object.fromEntries(methods) as Partial<ToolContext>);
  return seen;
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
    throw new RunError("invalid_output", `${file}: its result is not JSON: ${messageOf(err)}`);
  }
  if (bytes > MAX_STEP_BYTES) throw new RunError("too_large", `${file}: its result is ${bytes} bytes as JSON, over the journal's bound of ${MAX_STEP_BYTES} bytes; return less, or write it with a tool`);
  return result;
}
