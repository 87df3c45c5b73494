/**
 * Child runs (`ctx.spawn`, `ctx.map`, a `workers` toolset with `run: child`): a worker
 * or function started as a run of its own, in its own object, whose end the parent
 * waits for durably. The host starts them (`Children`) and records each one's end in
 * the parent's journal under `<spawn>/end` (journal/keys.ts `childEndKey`).
 */

import type { Budget } from "./budget";
import type { Usage } from "./usage";

/** What the engine asks the host to start: the child's worker and input, and its attributes. */
export interface ChildSpec {
  worker: string;
  input: unknown;
  attributes?: Record<string, string | number | boolean>;
  /** The spawning call's depth: the child's calls count on from it (MAX_DEPTH holds across runs). */
  depth: number;
  /**
   * What the child may spend: the parent's limits less what its tree used by the spawn (run/budget.ts
   * `remainingBudget`), recorded with the spawn. Set by the spawn step; the host never gives more than the parent's own limits.
   */
  budget?: Budget;
}

/** The host's answer to a start: the child run (started now, or before under the same id), or why not (a value). */
export type ChildStarted = { ok: true; id: string } | { ok: false; error: string };

/**
 * Where a run's children are started (the host's run objects). `start` is idempotent per
 * `id`: the engine derives it from the parent run and the spawn's journal key, so a start
 * whose answer was lost starts nothing new. No answer at all throws (the run is retried).
 */
export interface Children {
  start(id: string, key: string, spec: ChildSpec): Promise<ChildStarted>;
}

/** A child run's end, as the host records it under `<spawn>/end`: what the parent's code gets. */
export interface ChildEnd {
  ended: "child";
  at: number;
  run: string;
  status: "succeeded" | "failed" | "cancelled";
  output?: unknown;
  error?: { code: string; message: string };
  /** What the child run used (its own tree's), added to the parent's usage where it spawned it (run/spawn-step.ts). */
  usage?: Usage;
}

/** What `ctx.spawn` gives: the child run's id, and its result once it ends (a durable wait). */
export interface ChildHandle {
  readonly id: string;
  readonly worker: string;
  /** The child's output; a failed or cancelled child is a ToolError naming it. The parent's run is idle meanwhile. */
  result(): Promise<unknown>;
}
