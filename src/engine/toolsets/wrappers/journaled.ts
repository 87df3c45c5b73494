import { messageOf, propagates, ToolError } from "../../errors";
import type { Journal } from "../../journal/journal";
import type { Usage, UsageMeter } from "../../usage";
import type { Toolset } from "../toolset";

/** A call's recorded outcome: its result or error, and what it spent (to re-add on replay). */
export type RecordedCall = { ok: true; value: unknown; usage: Usage } | { ok: false; error: string; usage: Usage };

/**
 * Runs `fn` once per journal key: afterwards its outcome (value or error message)
 * is replayed, and its usage re-added to `meter`, without running it again.
 * Signals (approval, fatal errors) are not outcomes: they propagate unrecorded.
 */
export async function recordedCall(journal: Journal, key: string, meter: UsageMeter, fn: () => Promise<unknown>): Promise<unknown> {
  const recorded = journal.get<RecordedCall>(key);
  let outcome: RecordedCall;
  if (recorded) {
    meter.add(recorded.usage);
    outcome = recorded;
  } else {
    outcome = await journal.step<RecordedCall>(key, async () => {
      try {
        return { ok: true, value: (await fn()) ?? null, usage: meter.snapshot() };
      } catch (err) {
        if (propagates(err)) throw err;
        return { ok: false, error: messageOf(err), usage: meter.snapshot() };
      }
    });
  }
  if (!outcome.ok) throw new ToolError(outcome.error);
  return outcome.value;
}

/** Every tool call through this wrapper happens once per run, whatever is replayed. */
export function journaled(inner: Toolset, journal: Journal): Toolset {
  return {
    id: inner.id,
    listTools: () => inner.listTools(),
    callTool: (name, args, ctx) => recordedCall(journal, `${ctx.callPath}/result`, ctx.usage, () => inner.callTool(name, args, ctx)),
  };
}
