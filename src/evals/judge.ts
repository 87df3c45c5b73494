import * as z from "zod";
import type { ModelResolver } from "../engine/types/model";
import { toolParameters } from "../engine/json-schema";
import { madeCalls, type AskJudge, type RunEvidence } from "./checks";

const verdict = z.strictObject({
  pass: z.boolean(),
  score: z.number().min(0).max(1).optional(),
  reason: z.string().max(4000),
});
export type Verdict = z.infer<typeof verdict>;

/** What the judge reads of a run, cut so a long output cannot blow its context. */
const MAX_SHOWN = 20_000;

const INSTRUCTIONS = `You evaluate the work of an AI worker against a rubric.
Read the rubric, the worker's input, the tools it called and its output.
Answer with JSON only: {"pass": true|false, "score": 0..1, "reason": "one or two sentences"}.
Pass only if the output meets every point of the rubric.`;

/** Rubric checks ask a judge model (resolved like any model: a provider's, or a scripted `test:` one) for a verdict. */
export function judgeWith(models: ModelResolver): AskJudge {
  return async (judge, criteria, run) => {
    const res = await models(judge).request({
      messages: [
        { role: "system", content: INSTRUCTIONS },
        { role: "user", content: question(criteria, run) },
      ],
      tools: [],
      output: toolParameters(verdict),
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text ?? "");
    } catch {
      throw new Error(`judge ${judge} did not answer JSON: ${(res.text ?? "").slice(0, 200)}`);
    }
    const v = verdict.safeParse(parsed);
    if (!v.success) throw new Error(`judge ${judge} answered no verdict: ${v.error.issues.map((i) => i.message).join("; ")}`);
    return v.data;
  };
}

function question(criteria: string, run: RunEvidence): string {
  const calls = madeCalls(run.tree).map((c) => `- ${c.worker} called ${c.name} ${JSON.stringify(c.args)}`);
  return [
    `Rubric:\n${criteria}`,
    `Worker: ${run.worker} (the run ${run.status})`,
    `Input:\n${shown(run.input)}`,
    `Tool calls:\n${calls.length ? shown(calls.join("\n")) : "(none)"}`,
    `Output:\n${shown(run.output)}`,
  ].join("\n\n");
}

const shown = (value: unknown) => {
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "(none)");
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}\n[… cut: ${text.length} characters in all]` : text;
};
