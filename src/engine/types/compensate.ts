/**
 * What undoes one tool's effect (`compensate:` on a toolset instance): another tool of
 * the same instance, by its name in the kind, and its arguments — each a literal, or
 * `${args.<path>}` / `${result.<path>}` taken from the call that made the effect.
 */
export interface Compensation {
  tool: string;
  args?: Record<string, unknown>;
}

/** Per tool (its name in the kind): what undoes it. */
export type CompensateConfig = Record<string, Compensation>;
