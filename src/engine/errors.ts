/**
 * Three kinds of error, kept apart on purpose (see STYLE.md):
 * - developer mistakes in worker files or catalogs: `WorkerFileError`, `CatalogError`;
 * - signals the engine raises to change control flow (`propagates`, below);
 * - run-time failures: `ToolError` (goes back to the model as the tool's result)
 *   and `RunError` (ends the worker call; `fatal` ones end the whole run).
 *
 * The signals — the four `propagates` counts — each raised by engine or host code
 * and caught only there:
 * - `RunPaused` (`ApprovalRequired`, `WaitRequired`): raised by `askApproval`
 *   (approvals/ask-approval.ts: the tool gate, a budget extension) and `awaitWait`
 *   (waits/wait.ts: ctx.sleep, ctx.waitForEvent); the loop merges one turn's
 *   (loop.ts), `executeRun` turns it into the `awaiting_approval` or `waiting`
 *   outcome (executor.ts), the host records the pause.
 * - `RunInterrupted`: raised by the host — before a step (checkpoint, cancel, a
 *   test's fault: durable-objects/run/run.ts, tests/support/faults.ts), a model request handed to
 *   the queue (model-dispatch.ts), an approval email to retry (run/mail.ts), a global
 *   toolset call made for a run already signalled (global-toolsets.ts); caught by the
 *   host's activation (`alarm()` in durable-objects/run/run.ts).
 * - `StorageError`: raised by the journal (journal.ts, sqlite-journal.ts) or a state
 *   store (sqlite-state.ts); caught by the host's activation, which retries or fails the run.
 * - a fatal `RunError` (budget, model outage, too large, nondeterministic): raised
 *   where the limit or failure is found (budget.ts, model-step.ts, journaled.ts, …);
 *   caught by `executeRun`, which fails the run.
 * On their way up, wrappers (journaled.ts, redacted.ts) and `Promise.allSettled`
 * in the loop pass them on unrecorded and unchanged. User code (a function's body,
 * a kind's tool) never sees one: its ctx calls stay pending instead, and its
 * `SignalBoundary` passes the signal on (signal-boundary.ts).
 *
 * An error made from another one passes it as `{ cause }`, except where the other
 * one's text may hold a secret (redacted.ts, model/redacted.ts, attachments): the
 * redacted copy is all that leaves.
 */

import type { DeciderPolicy } from "./types/deciders";
import type { ToolFailure } from "./types/retry";

export type { ToolFailure };
import type { JSONSchema } from "./types/json-schema";

/** One problem in one worker file: `file: field: reason`. */
export class WorkerFileError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${file}: ${field}: ${reason}`);
    this.name = "WorkerFileError";
  }
}

/** A catalog refused as a whole, listing every problem found. */
export class CatalogError extends Error {
  constructor(readonly problems: WorkerFileError[]) {
    super(`worker catalog refused (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${problems.map((p) => `  ${p.message}`).join("\n")}`);
    this.name = "CatalogError";
  }
}

/** A failure the calling model should see as the tool's result, so it can adapt. `failure`: what kind, for a retry policy. */
export class ToolError extends Error {
  readonly failure?: ToolFailure;
  constructor(message: string, options?: ErrorOptions & { failure?: ToolFailure }) {
    super(message, options);
    this.name = "ToolError";
    if (options?.failure) this.failure = options.failure;
  }
}

/**
 * A call refused by a deny rule of the approval policy (`deny`, `deny_when`): the tool
 * never ran. Recorded as the call's error with `denied` (journaled.ts), so an approval
 * whose edit was refused this way is shown refused, not approved.
 */
export class DeniedByPolicy extends ToolError {
  constructor(message: string) {
    super(message);
    this.name = "DeniedByPolicy";
  }
}

export type RunErrorCode =
  | "max_turns"
  | "invalid_output"
  | "max_depth"
  | "model_not_allowed"
  | "model_error"
  | "budget_exceeded"
  | "unknown_worker"
  | "invalid_input"
  | "config"
  | "too_large"
  | "storage"
  | "function_failed"
  | "attachment_changed"
  | "nondeterministic"
  /** The platform kept ending the run's activations without an outcome (durable-objects/run/sweep.ts). */
  | "stuck"
  | "internal";

/**
 * A worker call that cannot finish. A non-fatal one inside a nested worker becomes
 * the parent's tool result; a fatal one (budget, model outage) ends the run.
 */
export class RunError extends Error {
  constructor(
    readonly code: RunErrorCode,
    message: string,
    readonly fatal = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "RunError";
  }
}

export interface PendingApproval {
  /** Journal key under which the decision is recorded. */
  key: string;
  id: string;
  callPath: string;
  workerChain: string[];
  tool: string;
  args: unknown;
  description: string;
  notify?: string;
  /** Who may decide it (the tool's `ask:` list, `allow_initiator`); absent: whoever it reaches. */
  deciders?: DeciderPolicy;
  /** Set for a question to a person (`ctx.askHuman`): answered with text, not approved or rejected. */
  kind?: "question";
  /**
   * The tool's input schema, which an approver's edit of the arguments is checked against
   * (approvals/edit.ts). Absent: the call is approved or rejected as asked, nothing else
   * (its policy says `editable: false`; a question; a budget).
   */
  inputSchema?: JSONSchema;
}

/** What a durable wait waits for (waits/wait.ts); its end is recorded under `key`. */
export interface PendingWait {
  /** Journal key under which its end (the wake-up, the event, the timeout) is recorded: `<call>/wait:<n>`. */
  key: string;
  id: string;
  /** `child`: a child run's end (run/spawn-step.ts); its `name` is the child's worker, its `correlation` the child's run id. */
  kind: "sleep" | "event" | "child";
  /** The event's name (kind `event`). */
  name?: string;
  /** The correlation key a signal trigger wakes it by (kind `event`); data, never part of a journal key. */
  correlation?: string;
  /** When it was asked (the run's clock), and when it ends by itself: a sleep's wake-up, an event wait's timeout (ms since the epoch). */
  since: number;
  until: number;
  callPath: string;
  workerChain: string[];
  /** Why it waits, as the model or the code said (shown, bounded). */
  reason?: string;
}

/**
 * Signal: the run pauses until people decide (`pending`) or the world answers
 * (`waits`). Parallel pauses are merged (`pausedTogether`), so one activation ends
 * with everything it waits for.
 */
export class RunPaused extends Error {
  constructor(
    readonly pending: PendingApproval[],
    readonly waits: PendingWait[],
  ) {
    super(
      `paused: ${[...pending.map((p) => `approval of ${p.tool}`), ...waits.map((w) => (w.kind === "sleep" ? "a timer" : w.kind === "child" ? `child run ${w.correlation}` : `event ${w.name}`))].join(", ")}`,
    );
    this.name = "RunPaused";
  }
}

/** Signal: one or more tool calls wait for a human. The run suspends. */
export class ApprovalRequired extends RunPaused {
  constructor(pending: PendingApproval[]) {
    super(pending, []);
    this.message = `awaiting approval: ${pending.map((p) => p.tool).join(", ")}`;
    this.name = "ApprovalRequired";
  }
}

/** Signal: a timer or an event wait (ctx.sleep, ctx.waitForEvent) is not over yet. The run suspends. */
export class WaitRequired extends RunPaused {
  constructor(waits: PendingWait[]) {
    super([], waits);
    this.name = "WaitRequired";
  }
}

/** Two pauses as one: approvals only stay an `ApprovalRequired`, waits only a `WaitRequired`. */
export function pausedTogether(a: RunPaused, b: RunPaused): RunPaused {
  const pending = [...a.pending, ...b.pending];
  const waits = [...a.waits, ...b.waits];
  if (!waits.length) return new ApprovalRequired(pending);
  return pending.length ? new RunPaused(pending, waits) : new WaitRequired(waits);
}

/**
 * Signal: stop this activation before the next unrecorded step, e.g. to checkpoint
 * a long run (the host re-arms its alarm) or because the run was cancelled.
 */
export class RunInterrupted extends Error {
  /**
   * `retry`: an effect failed for now (e.g. a notification); run again later from the journal.
   * `dispatched`: a model request was handed off; the answer wakes the run.
   */
  constructor(
    readonly reason: "checkpoint" | "cancelled" | "fault" | "retry" | "dispatched",
    readonly detail?: string,
  ) {
    super(`run interrupted: ${reason}${detail ? `: ${detail}` : ""}`);
    this.name = "RunInterrupted";
  }
}

/**
 * Signal: the journal could not record a step. Never a tool result or text a model
 * sees: it stops the activation, and the run continues from the journal when it is
 * retried. `permanent`: a retry would write the same and fail the same way, so the
 * run fails now instead.
 */
export class StorageError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "StorageError";
  }
}

/**
 * A store refused a step because its key holds one already (the journal's key is
 * unique). `value`: what the key holds, the first writer's.
 */
export class JournalKeyTaken extends Error {
  constructor(
    readonly key: string,
    readonly value: unknown,
  ) {
    super(`journal key ${key} holds a step already`);
    this.name = "JournalKeyTaken";
  }
}

/**
 * A replay met another call at a recorded key than the one recorded there: the run
 * fails rather than hand one call's result, decision or clock reading to another.
 */
export const nondeterministic = (
  key: string,
  recorded: string,
  now: string,
  why = "Code that holds a ctx must make the same ctx calls, with the same arguments, whatever order its parallel calls finish in",
) => new RunError("nondeterministic", `${key}: recorded for ${recorded}, now asked for ${now}. ${why} (docs/architecture.md, "Determinism contract")`, true);

/** Errors that must travel up through tool calls instead of becoming a tool result. */
export function propagates(err: unknown): boolean {
  return err instanceof RunPaused || err instanceof RunInterrupted || err instanceof StorageError || (err instanceof RunError && err.fatal);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
