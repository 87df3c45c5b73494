/**
 * Changing a call at its approval: what a decision request may carry, checked before
 * anything is written — a question takes an answer; a call's approval takes approve or
 * reject and, where its policy allows, edited arguments with an approval or a result in
 * the call's place (`respond`); shape first (cheap, before who decides is checked),
 * content after — and what an approval shows of it.
 */

import { MAX_ANSWER_CHARS } from "../../src/engine/approvals/ask-human";
import { editProblem, responseProblem } from "../../src/engine/approvals/edit";
import type { ApprovalDecision, DeciderPolicy } from "../../src/engine";
import { bindsArguments } from "../../src/engine/journal/fingerprint";
import { stableJson } from "../../src/engine/ids";
import type { JSONSchema } from "../../src/engine/types/json-schema";
import type { ApprovalView, DecisionRequest } from "../../src/runs/types";
import type { ApprovalRow } from "../rows";
import { parse } from "../sql";

type Asked = Pick<ApprovalRow, "key" | "kind" | "tool" | "deciders" | "input_schema">;

const changes = (d: DecisionRequest) => d.arguments !== undefined || d.decision === "respond";

/** Why a request does not fit what it decides, or null: the fields each decision takes, and whether this call may be changed at all. */
export function requestMismatch(ap: Asked, d: DecisionRequest): string | null {
  if (ap.kind === "question") {
    if (d.answer === undefined || d.decision !== "approve" || d.arguments !== undefined || d.result !== undefined)
      return "this is a question: answer it with text";
    if (!d.answer.trim()) return "the answer is empty";
    return d.answer.length > MAX_ANSWER_CHARS ? `the answer is ${d.answer.length} characters; at most ${MAX_ANSWER_CHARS}` : null;
  }
  if (d.answer !== undefined) return "this is an approval: approve or reject it; only a question takes an answer";
  if (d.decision === "respond" && typeof d.result !== "string") return "result: respond takes the call's result as text";
  if (d.decision !== "respond" && d.result !== undefined) return 'result: only a "respond" decision takes a result';
  if (d.decision !== "approve" && d.arguments !== undefined) return 'arguments: only an "approve" decision takes edited arguments';
  if (!changes(d)) return null;
  if (d.remember) return "remember approves identical calls as asked: it does not go with edited arguments or an answer";
  if (!bindsArguments(ap.key)) return "this approval is about the run's budget and binds no arguments: approve or reject it";
  const policy = ap.deciders ? parse<DeciderPolicy>(ap.deciders) : undefined;
  if (policy?.editable === false) return `the approval policy of ${ap.tool} says editable: false: approve or reject the call as asked`;
  if (ap.input_schema === null) return "this approval was asked before calls could be edited: approve or reject it as asked";
  return null;
}

/**
 * What the request changes of the call, once it fits (`requestMismatch`) and its decider
 * may decide: the edited arguments (none when they are the asked ones), or the answer in
 * its place; or why its content is refused, naming the field.
 */
export function changeOf(ap: Asked & Pick<ApprovalRow, "args">, d: DecisionRequest): { problem: string } | Pick<ApprovalDecision, "args" | "response"> {
  if (d.decision === "respond") {
    const problem = responseProblem(d.result!);
    return problem ? { problem } : { response: d.result! };
  }
  if (d.arguments === undefined) return {};
  const problem = editProblem(parse<JSONSchema>(ap.input_schema!), d.arguments);
  if (problem) return { problem };
  // Approving the asked arguments unchanged (a form sent as it came) is no edit.
  return stableJson(d.arguments) === stableJson(parse(ap.args)) ? {} : { args: d.arguments };
}

/** What an approval says of changing its call: whether it may be, against what schema (while pending), and what was changed. */
export const changeView = (r: ApprovalRow): Pick<ApprovalView, "editable" | "input_schema" | "edited_args" | "response" | "args_sha256" | "denied"> => {
  const editable = r.input_schema !== null && r.kind !== "question" && (r.deciders === null || parse<DeciderPolicy>(r.deciders).editable !== false);
  return {
    editable,
    input_schema: editable && r.status === "pending" ? parse(r.input_schema) : null,
    edited_args: r.edited_args === null ? null : parse(r.edited_args),
    response: r.response ?? null,
    args_sha256: r.args_hash ?? null,
    denied: r.denied ?? null,
  };
};
