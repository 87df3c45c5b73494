/** Approval rules on a call's arguments, as the catalog keeps them (approvals/arg-rules.ts reads and evaluates them). */
import type { Policy } from "./toolset";

/** What a test compares: JSON's values other than lists and objects. */
export type RuleScalar = string | number | boolean | null;

/** One field's test, normalized: `in` (a written value or `eq` is a list of one), or bounds on a number. */
export interface FieldTest {
  in?: RuleScalar[];
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** Field path → test; holds when every test holds. Built with `Object.fromEntries`: a path is an own key, whatever it is. */
export type Condition = Record<string, FieldTest>;

/**
 * A tool's policy when it has rules: `deny_when` is checked first, then `ask_when`,
 * else `otherwise`. Normalized, it is also a valid written policy (a created worker's
 * definition copies it as is).
 */
export interface ArgRules {
  deny_when?: Condition[];
  ask_when?: Condition[];
  otherwise: Policy;
}

/** A worker's `approval:` entry for one tool: a policy, or rules on the call's arguments that choose one. */
export type ToolPolicy = Policy | ArgRules;
