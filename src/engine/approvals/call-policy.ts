import type * as z from "zod";
import { evaluateRules } from "./arg-rules";
import type { ToolPolicy } from "../types/arg-rules";
import type { ApprovalCheck, Policy, ToolDef } from "../types/toolset";

/** The rule a `needsApproval` decision is recorded under (one rule: the tool's code). */
export const NEEDS_APPROVAL_RULE = "needsApproval";

/**
 * What happens to one call, and the rule that chose it: set when the worker's policy
 * has rules or the tool's code decided (an ask under a rule is recorded with it); unset
 * for a plain policy or a kind's default. `unsure`: why it failed closed.
 */
export interface CallPolicy {
  policy: Policy;
  rule?: string;
  unsure?: string;
}

/**
 * A call's policy when it is known without waiting: the worker's entry for the tool
 * (its rules evaluated on the arguments as the tool reads them), else the kind's
 * default. Undefined when the tool's code decides (`codePolicy`). A kind's `approval`
 * function that throws is the caller's to handle.
 */
export function policyNow(entry: ToolPolicy | undefined, def: ToolDef, args: unknown): CallPolicy | undefined {
  if (entry === undefined) return def.needsApproval ? undefined : { policy: def.approval(args) };
  if (typeof entry === "string") return { policy: entry };
  let read: unknown;
  try {
    read = def.ruleArgs ? def.ruleArgs(args) : args;
  } catch {
    return evaluateRules(entry, args, "the arguments could not be read");
  }
  return evaluateRules(entry, read);
}

/** The tool's `needsApproval` on this call: true asks, false allows; anything else (a throw, a rejection, not a boolean) asks. */
export async function codePolicy(def: ToolDef, args: unknown, check: ApprovalCheck): Promise<CallPolicy> {
  let answer: unknown;
  try {
    answer = await def.needsApproval!(args, check);
  } catch {
    // The error's text stays out: the approver sees this, and the tool's code may have put anything in it.
    return { policy: "ask", rule: NEEDS_APPROVAL_RULE, unsure: "needsApproval failed" };
  }
  if (answer === false) return { policy: "allow" };
  return answer === true
    ? { policy: "ask", rule: NEEDS_APPROVAL_RULE }
    : { policy: "ask", rule: NEEDS_APPROVAL_RULE, unsure: `needsApproval returned ${answer === null ? "null" : typeof answer}, not true or false` };
}

/**
 * A tool's (or a function's) `needsApproval` and `ruleArgs` as a ToolDef holds them:
 * given the arguments as its zod `input` parses them (defaults applied), as its code
 * reads them. Arguments the input refuses are refused by the call itself, so there is
 * nothing to ask about: `needsApproval` is not called, and rules read them as sent.
 * Each gets a copy (zod passes an `unknown` field's value through): what the tool's code
 * changes there is neither what the approver is asked about nor what the tool runs with.
 */
export function onParsedInput(
  input: z.ZodType,
  spec: { needsApproval?(args: unknown, check: ApprovalCheck): boolean | Promise<boolean>; ruleArgs?(args: unknown): unknown },
): Pick<ToolDef, "needsApproval" | "ruleArgs"> {
  const needsApproval = spec.needsApproval?.bind(spec);
  const ruleArgs = spec.ruleArgs?.bind(spec);
  return {
    ruleArgs(args) {
      const parsed = input.safeParse(structuredClone(args));
      if (!parsed.success) return args;
      return ruleArgs ? ruleArgs(parsed.data) : parsed.data;
    },
    ...(needsApproval
      ? {
          needsApproval(args, check) {
            const parsed = input.safeParse(structuredClone(args));
            return parsed.success ? needsApproval(parsed.data, check) : false;
          },
        }
      : {}),
  };
}
