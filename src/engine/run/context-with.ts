import type { ToolContext } from "../types/context";

/**
 * `ctx` with some members replaced, for a wrapper or kind that hands its tool a
 * different `state` or `step`. Same prototype as `ctx`, not a spread: the engine's
 * contexts keep the idempotency key and the methods as getters there, made only when read.
 */
export function contextWith(ctx: ToolContext, members: Partial<ToolContext>): ToolContext {
  return Object.assign(Object.create(Object.getPrototypeOf(ctx) as object) as ToolContext, ctx, members);
}
