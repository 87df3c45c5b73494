import { messageOf, nondeterministic, propagates, ToolError, type ToolFailure } from "../../errors";
import type { Journal } from "../../journal/journal";
import { attemptKey } from "../../journal/keys";
import type { ToolContext } from "../../types/context";
import type { Clock } from "../../types/ports";
import type { ToolDef, Toolset } from "../../types/toolset";
import { delayAfter, MAX_BACKOFF_MS, retries, retryPolicy, type RetryConfig } from "../retry-config";
import { WrapperToolset } from "./wrapper";

/** A failed try as recorded under `<call>/attempt:<n>`: of which tool, why (`error`, bounded, when it threw), and when the next try was due. */
export interface RecordedAttempt {
  tool: string;
  error?: string;
  failure: ToolFailure;
  due: number;
}

const MAX_ERROR_CHARS = 1000;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown; failure?: ToolFailure };

/**
 * An instance's tools tried again after a transient failure (`retry:` in a worker file,
 * toolsets/retry-config.ts). Inside the call's one `<call>/result` step: each failed try
 * is recorded (`<call>/attempt:<n>`) before the wait, so a replay never makes a recorded
 * try again and a crash between tries resumes at the next one, waiting out what is left
 * of its delay. Every try is the same call: same path, so the same idempotency key, and
 * its requests take their turn in the activation's connection line as any request does.
 * The last try's result or error is the call's outcome, recorded once by `journaled`.
 */
export class Retrying extends WrapperToolset {
  private defs: Promise<Map<string, ToolDef>> | undefined;

  constructor(
    inner: Toolset,
    private readonly config: RetryConfig,
    private readonly journal: Journal,
    private readonly clock: Clock,
  ) {
    super(inner);
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const policy = retryPolicy(this.config, name);
    let due: number | undefined;
    for (let n = 1; ; n++) {
      const key = attemptKey(ctx.callPath, n);
      const recorded = this.journal.get<RecordedAttempt>(key);
      if (recorded) {
        if (recorded.tool !== name) throw nondeterministic(key, `a try of ${recorded.tool}`, `a try of ${name}`);
        due = recorded.due;
        continue;
      }
      if (due !== undefined) {
        const wait = Math.min(due - this.clock.now(), MAX_BACKOFF_MS);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // A cancel, a checkpoint (or a test's fault) stops the run here, between two tries.
        await this.journal.beforeEffect(key);
      }
      const outcome = await attempt(() => this.inner.callTool(name, args, ctx), name, policy.timeoutMs);
      const failure = outcome.ok ? (await this.def(name))?.failure?.(outcome.value) : outcome.failure;
      const delay = failure && n < policy.attempts && retries(policy, failure) ? delayAfter(policy, n, failure) : undefined;
      if (delay === undefined) {
        if (outcome.ok) return outcome.value;
        throw outcome.error;
      }
      due = this.clock.now() + delay;
      const error = outcome.ok ? undefined : messageOf(outcome.error).slice(0, MAX_ERROR_CHARS);
      await this.journal.record<RecordedAttempt>(key, { tool: name, ...(error === undefined ? {} : { error }), failure: failure!, due });
    }
  }

  private async def(name: string): Promise<ToolDef | undefined> {
    this.defs ??= this.inner.listTools().then((list) => new Map(list.map((d) => [d.name, d])));
    return (await this.defs).get(name);
  }
}

/**
 * One try: its value or its error (signals rethrown). With `timeoutMs`, a try still
 * running then is abandoned, not stopped (the kind's own time limit, http's `timeout_ms`,
 * stops its request); the next try carries the same idempotency key.
 */
async function attempt(call: () => Promise<unknown>, name: string, timeoutMs: number | undefined): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const running = call();
    if (timeoutMs === undefined) return { ok: true, value: await running };
    running.catch(() => {}); // abandoned on timeout: its later failure is nobody's
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ToolError(`${name} timed out after ${timeoutMs} ms`, { failure: { reason: "timeout" } })), timeoutMs);
    });
    return { ok: true, value: await Promise.race([running, timedOut]) };
  } catch (err) {
    if (propagates(err)) throw err;
    return { ok: false, error: err, failure: err instanceof ToolError ? err.failure : undefined };
  } finally {
    clearTimeout(timer);
  }
}

export const retrying = (inner: Toolset, config: RetryConfig, journal: Journal, clock: Clock): Toolset => new Retrying(inner, config, journal, clock);
