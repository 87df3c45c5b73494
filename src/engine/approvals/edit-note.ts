import type { Journal } from "../journal/journal";
import { approvalKey } from "../journal/keys";
import type { ApprovalDecision } from "./ask-approval";

/** Characters of the edited arguments the model is shown (the full ones are on the run). */
const MAX_SHOWN_ARGS = 4000;

/**
 * A tool call's content as the model reads it: as the tool returned it, unless a person
 * changed the call. Then the model is told so before it — the arguments it was called with, or
 * that the content is a person's answer and the tool never ran — with the approver's
 * note, so its next turn does not take either for its own call's work. Derived from the
 * decision in the journal: the same on every replay. Code calling tools
 * (`ctx.callTool`) gets the result alone.
 */
export function withEditNote(journal: Pick<Journal, "get" | "changedByPerson">, callPath: string, content: string): string {
  if (!journal.changedByPerson(callPath)) return content;
  const d = journal.get<ApprovalDecision>(approvalKey(callPath));
  if (!d) return content;
  const note = d.note ? ` The approver's note: ${d.note}` : "";
  if (typeof d.response === "string") return `[A person answered in place of this call: the tool did not run. Their answer follows.${note}]\n${content}`;
  if (d.approved && d.args !== undefined) {
    const json = JSON.stringify(d.args);
    const shown = json.length > MAX_SHOWN_ARGS ? `${json.slice(0, MAX_SHOWN_ARGS)}…` : json;
    return `[A person edited this call's arguments before approving it; it was called with ${shown}.${note}]\n${content}`;
  }
  return content;
}
