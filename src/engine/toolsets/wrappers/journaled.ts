import { DeniedByPolicy, messageOf, nondeterministic, propagates, ToolError } from "../../errors";
import { callFingerprint } from "../../journal/fingerprint";
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
 * number is its full size in bytes. `denied`: the error is an approval policy's deny rule
 * (the tool never ran). `name` and `fp` (journal/fingerprint.ts
 * `argsFingerprint`): what was called (tool or worker) and with what, so a replay that
 * makes another call at this key is caught (absent in older journals).
 */
export type RecordedCall = ({ ok: true; value: unknown } | { ok: false; error: string; denied?: true }) & {
  name?: string;
  fp?: number;
  usage?: Usage;
  truncatedFrom?: number;
};

/**
 * Runs `fn` once per journal key: afterwards its outcome (value or error message)
 * is replayed, and its usage re-added to `meter`, without running it again.
 * Signals (approval, fatal errors, storage failures) are not outcomes: they
 * propagate unrecorded. An outcome is matched to its call by `name` and by its
 * arguments' fingerprint as well as by key: a replay that calls something else there,
 * or the same tool with other arguments, fails the run (`nondeterministic`) rather
 * than return another call's outcome.
 */
export async function recordedCall(
  journal: Journal,
  key: string,
  meter: UsageMeter,
  fn: () => Promise<unknown>,
  name: string,
  fp: number | undefined,
): Promise<unknown> {
  let outcome = journal.get<RecordedCall>(key);
  // Replayed: re-add what it spent (a call that spent nothing recorded no usage).
  if (outcome) {
    if ((outcome.name !== undefined && outcome.name !== name) || (outcome.fp !== undefined && outcome.fp !== fp))
      throw nondeterministic(key, called(outcome.name ?? name, outcome.fp), called(name, fp));
    if (outcome.usage) meter.add(outcome.usage);
  } else
    outcome = await journal.step<RecordedCall>(
      key,
      () => settled(fn, meter, name, fp),
      (big) => fitted(key, big),
    );
  if (!outcome.ok) throw new ToolError(outcome.error);
  return outcome.value;
}

/** A call as a nondeterministic failure names it: what was called, and its arguments' fingerprint. */
const called = (name: string, fp: number | undefined) => `a call of ${name}${fp === undefined ? "" : ` with arguments #${fp.toString(36)}`}`;

/** `fn`'s outcome: its value or error (thrown at once or later), with the usage it added; signals rethrown. */
function settled(fn: () => Promise<unknown>, meter: UsageMeter, name: string, fp: number | undefined): Promise<RecordedCall> {
  const failed = (err: unknown): RecordedCall => {
    if (propagates(err)) throw err;
    return spent({ ok: false, error: messageOf(err), ...(err instanceof DeniedByPolicy ? { denied: true as const } : {}), name, fp }, meter);
  };
  let running: Promise<unknown>;
  try {
    running = fn();
  } catch (err) {
    return Promise.resolve(failed(err));
  }
  return running.then((value) => spent({ ok: true, value: value ?? null, name, fp }, meter), failed);
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
      ? { ok: true, value: kept, name: outcome.name, fp: outcome.fp, usage: outcome.usage, truncatedFrom }
      : { ok: false, error: kept, name: outcome.name, fp: outcome.fp, usage: outcome.usage, truncatedFrom };
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
    return recordedCall(this.journal, resultKey(ctx.callPath), ctx.usage, () => this.inner.callTool(name, args, ctx), name, callFingerprint(ctx, args));
  }
}

export const journaled = (inner: Toolset, journal: Journal): Toolset => new Journaled(inner, journal);
