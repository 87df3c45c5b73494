import * as z from "zod";
import { describeIssues, validatorFor } from "../engine/json-schema";
import { stableJson } from "../engine/ids";
import type { CallNode } from "../engine/journal/call-tree";
import type { JSONSchema } from "../engine/types/json-schema";
import type { Usage } from "../engine/types/usage";
import { argsMismatch, shortJson } from "./args-pattern";
import { diffText, lineDiff } from "./diff";
import type { Verdict } from "./judge";

const toolPattern = z.strictObject({
  name: z.string().min(1).max(128),
  /** Only calls made by this worker (its name); default any worker of the run. */
  worker: z.string().min(1).optional(),
  args: z.unknown().optional(),
});

/** Every check an eval case can make, by its key in the file. */
export const checkSchemas = {
  status: z.enum(["succeeded", "failed", "awaiting_approval", "waiting"]),
  output_schema: z.record(z.string(), z.unknown()),
  output_equals: z.unknown(),
  output_contains: z.union([z.string().min(1).max(10_000), z.array(z.string().min(1).max(10_000)).min(1).max(50)]),
  tool_called: toolPattern.extend({ times: z.number().int().min(1).max(1000).optional() }),
  tool_not_called: toolPattern,
  max_turns: z.number().int().min(1),
  max_tokens: z.number().int().min(1),
  max_cost_usd: z.number().nonnegative(),
  rubric: z.strictObject({
    criteria: z.string().min(1).max(10_000),
    /** Default the suite's `judge`. */
    judge: z.string().min(1).optional(),
    /** Passing also needs the judge's score (0–1) at least this. */
    min_score: z.number().min(0).max(1).optional(),
  }),
} as const;

type Schemas = typeof checkSchemas;
export type Check = { [K in keyof Schemas]: { kind: K; spec: z.output<Schemas[K]> } }[keyof Schemas];

/** What a case's run left to check. */
export interface RunEvidence {
  worker: string;
  input: unknown;
  status: "succeeded" | "failed" | "awaiting_approval" | "waiting" | "error";
  output: unknown;
  /** Why the run failed or could not run. */
  error?: string;
  usage: Usage;
  tree: CallNode | null;
}

export interface CheckResult {
  check: string;
  pass: boolean;
  /** Why it failed (a diff, the calls made), or the judge's reason. */
  detail?: string;
}

/** Asks a judge model about a run; `judge.ts`. */
export type AskJudge = (judge: string, criteria: string, run: RunEvidence) => Promise<Verdict>;

/** A tool call anywhere in the run, with the worker that made it. */
export interface MadeCall {
  worker: string;
  name: string;
  args: unknown;
}

export function madeCalls(node: CallNode | null): MadeCall[] {
  if (!node) return [];
  return node.tools.flatMap((t) => [{ worker: node.worker, name: t.name, args: t.args }, ...t.calls.flatMap(madeCalls)]);
}

/** A case without a `status` check expects the run to succeed. */
export function withDefaultStatus(checks: readonly Check[]): Check[] {
  return checks.some((c) => c.kind === "status") ? [...checks] : [{ kind: "status", spec: "succeeded" }, ...checks];
}

export async function runCheck(check: Check, run: RunEvidence, ask: AskJudge, defaultJudge?: string): Promise<CheckResult> {
  const label = `${check.kind}${check.kind === "tool_called" || check.kind === "tool_not_called" ? ` ${check.spec.name}` : ""}`;
  try {
    const failure = await failureOf(check, run, ask, defaultJudge);
    return failure === undefined ? { check: label, pass: true } : { check: label, pass: false, detail: failure };
  } catch (err) {
    return { check: label, pass: false, detail: `could not check: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Undefined when the check passes, else why not. */
async function failureOf(check: Check, run: RunEvidence, ask: AskJudge, defaultJudge?: string): Promise<string | undefined> {
  switch (check.kind) {
    case "status":
      return run.status === check.spec ? undefined : `expected the run to end ${check.spec}, it ended ${run.status}${run.error ? `: ${run.error}` : ""}`;
    case "output_schema": {
      const parsed = validatorFor(check.spec as JSONSchema).safeParse(run.output);
      return parsed.success ? undefined : `the output does not match the schema: ${describeIssues(parsed.error)}\noutput: ${shortJson(run.output, 2000)}`;
    }
    case "output_equals":
      return stableJson(run.output) === stableJson(check.spec)
        ? undefined
        : `the output differs (- expected, + got):\n${lineDiff(diffText(check.spec), diffText(run.output))}`;
    case "output_contains": {
      const text = diffText(run.output);
      const missing = [check.spec].flat().filter((s) => !text.includes(s));
      return missing.length ? `the output lacks ${missing.map((s) => JSON.stringify(s)).join(", ")}; output:\n${indent(text)}` : undefined;
    }
    case "tool_called":
    case "tool_not_called":
      return toolFailure(check, madeCalls(run.tree));
    case "max_turns": {
      const turns = run.tree?.turns ?? 0;
      return turns <= check.spec ? undefined : `${run.worker} took ${turns} turns, over ${check.spec}`;
    }
    case "max_tokens": {
      const tokens = run.usage.inputTokens + run.usage.outputTokens;
      return tokens <= check.spec ? undefined : `the run used ${tokens} tokens, over ${check.spec}`;
    }
    case "max_cost_usd":
      return run.usage.costUsd <= check.spec ? undefined : `the run cost $${run.usage.costUsd.toFixed(6)}, over $${check.spec}`;
    case "rubric": {
      const judge = check.spec.judge ?? defaultJudge;
      if (!judge) return "no judge: name one on the check (judge:) or the suite";
      const v = await ask(judge, check.spec.criteria, run);
      const low = check.spec.min_score !== undefined && (v.score ?? 0) < check.spec.min_score;
      return v.pass && !low ? undefined : `${judge} judged it ${v.pass ? `below ${check.spec.min_score} (score ${v.score})` : "a fail"}: ${v.reason}`;
    }
  }
}

function toolFailure(check: Extract<Check, { kind: "tool_called" | "tool_not_called" }>, calls: MadeCall[]): string | undefined {
  const { name, worker, args } = check.spec;
  const named = calls.filter((c) => c.name === name && (worker === undefined || c.worker === worker));
  const misses = named.map((c) => (args === undefined ? undefined : argsMismatch(args, c.args)));
  const matching = misses.filter((m) => m === undefined).length;
  const what = `${name}${worker ? ` (by ${worker})` : ""}${args === undefined ? "" : ` with args matching ${shortJson(args)}`}`;
  if (check.kind === "tool_not_called") return matching ? `expected no call of ${what}, got ${matching}\n${listCalls(calls)}` : undefined;
  const times = check.spec.times;
  if (times === undefined ? matching > 0 : matching === times) return undefined;
  const why = misses.flatMap((m, i) => (m ? [`  ${named[i]!.name} #${i + 1}: ${m}`] : []));
  return [`expected ${times ?? "a"} call${times === 1 || times === undefined ? "" : "s"} of ${what}, got ${matching}`, ...why, listCalls(calls)].join("\n");
}

const listCalls = (calls: MadeCall[]) =>
  calls.length ? `calls made:\n${calls.map((c) => `  ${c.worker} → ${c.name} ${shortJson(c.args, 300)}`).join("\n")}` : "no tool was called";

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
