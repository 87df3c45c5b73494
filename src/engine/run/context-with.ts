import type { ToolContext } from "../types/context";

/** The ctx methods that act for user code (a journaled effect, a nested call): the ones a signal may leave, so the ones a boundary guards. */
export const EFFECT_METHODS = [
  "llmAsk",
  "llmAgent",
  "callTool",
  "callWorker",
  "step",
  "now",
  "randomId",
  "askHuman",
  "sleep",
  "sleepUntil",
  "waitForEvent",
  "setAttribute",
  "schedule",
  "spawn",
] as const;

/** Set on a context that has some of EFFECT_METHODS as own members (given to `contextWith`): copies keep it. */
export const OWN_EFFECTS = Symbol("ownEffects");

/**
 * `ctx` with some members replaced, for a wrapper or kind that hands its tool a
 * different `state` or `step`. Same prototype as `ctx`, not a spread: the engine's
 * contexts keep the idempotency key and the methods as getters there, made only when read.
 */
export function contextWith(ctx: ToolContext, members: Partial<ToolContext>): ToolContext {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(ctx) as object) as ToolContext, ctx, members);
  for (const name in members) if (EFFECT_SET.has(name)) (copy as unknown as Record<symbol, boolean>)[OWN_EFFECTS] = true;
  return copy;
}

const EFFECT_SET = new Set<string>(EFFECT_METHODS);
