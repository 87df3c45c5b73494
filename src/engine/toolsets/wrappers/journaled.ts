import { messageOf, propagates, RunError, ToolError } from "../../errors";
import { cutToJsonBytes, MAX_STEP_BYTES, stepBytes, utf8Bytes } from "../../journal/bounds";
import type { Journal } from "../../journal/journal";
import { resultKey } from "../../journal/keys";
import type { UsageMeter } from "../../run/usage";
import type { Usage } from "../../types/usage";
import type { ToolContext } from "../../types/context";
import type { Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/**
 * A call's recorded outcome: its result or error, and what it spent (to re-add on
 * replay; absent when it spent nothing, as most tool calls). `truncatedFrom`: the
 * outcome was too big for the journal and is kept as its JSON text cut to fit; the
 * number is its full size in bytes. `name`: what was called (tool or worker), so a
 * replay that makes another call at this key is caught (absent in older journals).
 */
export type RecordedCall = ({ ok: true; value: unknown } | { ok: false; error: string }) & { name?: string; usage?: Usage; truncatedFrom?: number };

/**
 * Runs `fn` once per journal key: afterwards its outcome (value or error message)
 * is replayed, and its usage re-added to `meter`, without running it again.
 * Signals (approval, fatal errors, storage failures) are not outcomes: they
 * propagate unrecorded. An outcome is matched to its call by `name` as well as by
 * key: a replay that calls something else there fails the run (`nondeterministic`)
 * rather than return another call's outcome.
 */
export async function recordedCall(journal: Journal, key: string, meter: UsageMeter, fn: () => Promise<unknown>, name: string): Promise<unknown> {
  let outcome = journal.get<RecordedCall>(key);
  // Replayed: re-add what it spent (a call that spent nothing recorded no usage).
  if (outcome) {
    if (outcome.name !== undefined && outcome.name !== name) throw nondeterministic(key, outcome.name, name);
    if (outcome.usage) meter.add(outcome.usage);
  } else
    outcome = await journal.step<RecordedCall>(
      key,
      () => settled(fn, meter, name),
      (big) => fitted(key, big),
    );
  if (!outcome.ok) throw new ToolError(outcome.error);
  return outcome.value;
}

const nondeterministic = (key: string, recorded: string, now: string) =>
  new RunError(
    "nondeterministic",
    `${key}: this call was ${recorded} when recorded, now ${now}: code that calls ctx (a function's body, a tool) must make the same ctx calls in the same order on replay`,
    true,
  );

/** `fn`'s outcome: its value or error (thrown at once or later), with the usage it added; signals rethrown. */
function settled(fn: () => Promise<unknown>, meter: UsageMeter, name: string): Promise<RecordedCall> {
  const failed = (err: unknown): RecordedCall => {
    if (propagates(err)) throw err;
    return spent({ ok: false, error: messageOf(err), name }, meter);
  };
  let running: Promise<unknown>;
  try {
    running = fn();
  } catch (err) {
    return Promise.resolve(failed(err));
  }
  return running.then((value) => spent({ ok: true, value: value ?? null, name }, meter), failed);
}

/** The outcome with the usage `meter` counted, if any: nothing to write (or re-add) for a call that spent nothing. */
function spent(outcome: RecordedCall, meter: UsageMeter): RecordedCall {
  if (meter.total.requests || meter.total.inputTokens || meter.total.outputTokens || meter.total.costUsd) outcome.usage = meter.snapshot();
  return outcome;
}

/**
 * An oversized outcome as one journal step can hold it. The call has happened, so
 * it is still recorded — cut, flagged, and with a note the model reads — rather
 * than left out (an unrecorded effect would run again on replay).
 */
function fitted(key: string, outcome: RecordedCall): RecordedCall {
  const text = outcome.ok ? (typeof outcome.value === "string" ? outcome.value : JSON.stringify(outcome.value)) : outcome.error;
  const truncatedFrom = utf8Bytes(text);
  const note = `…[cut by edgework to fit the run's journal: ${truncatedFrom} bytes in full]`;
  const as = (kept: string): RecordedCall =>
    outcome.ok
      ? { ok: true, value: kept, name: outcome.name, usage: outcome.usage, truncatedFrom }
      : { ok: false, error: kept, name: outcome.name, usage: outcome.usage, truncatedFrom };
  return as(cutToJsonBytes(text, MAX_STEP_BYTES - stepBytes(key, as(note))) + note);
}

/** Every tool call through this wrapper happens once per run, whatever is replayed. */
export class Journaled extends WrapperToolset {
  constructor(
    inner: Toolset,
    private readonly journal: Journal,
  ) {
    super(inner);
  }

  override callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    return recordedCall(this.journal, resultKey(ctx.callPath), ctx.usage, () => this.inner.callTool(name, args, ctx), name);
  }
}

export const journaled = (inner: Toolset, journal: Journal): Toolset => new Journaled(inner, journal);
