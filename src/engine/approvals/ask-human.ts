import { ToolError } from "../errors";
import type { Journal } from "../journal/journal";
import type { CallFrame } from "../types/callable";
import type { HumanAnswer, HumanQuestion } from "../types/deciders";
import { askApproval, type ApprovalHost } from "./ask-approval";
import { MAX_DECIDERS, normalizeAddress, readDeciderEntry } from "./deciders";

/** The pseudo-tool a question appears as, where approvals list tools (pages, inbox, API). */
export const QUESTION_TOOL = "ask_human";
/** A question is read by a person in an email: longer is a mistake (a model pasting a document). */
export const MAX_QUESTION_CHARS = 4000;
export { MAX_ANSWER_CHARS } from "../../api/bounds";

/**
 * A question to a person, on the approval machinery: recorded as a pending approval of
 * `kind: "question"` under `<path>/approval` (`path`: the call's `human:<n>` effect),
 * emailed once, and the run pauses until someone `q.deciders` admits (the initiator too) answers it
 * (the answer is the decision's `answer`) or it expires ("no answer"). Replay returns the
 * recorded answer. No approval mode answers a question: only a person does.
 */
export async function askHuman(
  run: { journal: Journal; approvals: ApprovalHost },
  frame: Pick<CallFrame, "chain" | "worker">,
  path: string,
  q: HumanQuestion,
): Promise<HumanAnswer> {
  const question = typeof q.question === "string" ? q.question.trim() : "";
  if (!question) throw new ToolError("askHuman: the question is empty");
  if (question.length > MAX_QUESTION_CHARS) throw new ToolError(`askHuman: the question is ${question.length} characters; at most ${MAX_QUESTION_CHARS}`);
  const to = q.to === undefined ? undefined : normalizeAddress(q.to);
  if (to === null) throw new ToolError("askHuman: `to` is not a plain ASCII email address");
  const ask = q.deciders?.ask === undefined ? undefined : askList(q.deciders.ask);
  const decision = await askApproval({
    journal: run.journal,
    host: run.approvals,
    callPath: path,
    asked: {
      kind: "question",
      workerChain: [...frame.chain],
      tool: QUESTION_TOOL,
      args: { question, ...(to ? { to } : {}) },
      description: question,
      notify: to ?? frame.worker.notify,
      // Who started the run may answer its questions (the rule against the initiator is about approving one's own calls).
      deciders: { ...(ask ? { ask } : {}), allowInitiator: true },
    },
    decideWithoutAsking: () => undefined,
  });
  if (decision.approved && typeof decision.answer === "string") return { answered: true, answer: decision.answer, by: decision.decider ?? null };
  // Only a person answers and nobody rejects: anything else is an expiry.
  return { answered: false, reason: "nobody answered before the question expired" };
}

/** `deciders.ask` as a worker file's is read: each entry normalized (`Lead@Example.com` names lead@example.com), bounded, a bad one named. */
function askList(entries: unknown): string[] {
  if (!Array.isArray(entries)) throw new ToolError("askHuman: deciders.ask must be a list of addresses, *@domain or api");
  if (entries.length > MAX_DECIDERS) throw new ToolError(`askHuman: deciders.ask has ${entries.length} entries; at most ${MAX_DECIDERS}`);
  return entries.map((e, i) => {
    const read = typeof e === "string" ? readDeciderEntry(e) : { problem: "not a string" };
    if ("problem" in read) throw new ToolError(`askHuman: deciders.ask[${i}]: ${read.problem}`);
    return read.entry;
  });
}
