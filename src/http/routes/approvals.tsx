import { Hono } from "hono/tiny";
import { runStub, runView } from "../../runs";
import { ApprovalPage, closedApproval, DecisionPage } from "../../views/approval-page";
import { Problem } from "../../views/layout";
import { AnsweredPage, QuestionPage } from "../../views/question-page";
import { checkApprovalLink, linkDecider, linkRefusal, runPageLink } from "../approval-link";
import { describeApproval } from "../describe-approval";
import { appPath } from "../base-path";
import { argumentFields, argumentsFromForm, argumentsFromJson } from "../../views/argument-fields";
import type { ApprovalView, DecisionRequest } from "../../runs/types";

/**
 * The approval link from the email. GET shows what will happen and changes
 * nothing (mail scanners prefetch links); POST decides, once.
 */
export const approvals = new Hono<{ Bindings: Env }>();

approvals.get("/:token", async (c) => {
  const token = c.req.param("token");
  const link = await checkApprovalLink(c, token);
  if (!link.ok) return c.html(<Problem title={link.title} message={link.message} />, link.status);
  const runLink = runPageLink(link.run.id, token);
  const closed = closedApproval(link.run, link.approval);
  if (closed) return c.html(<Problem title={closed.title} message={closed.message} runLink={runLink} />, closed.status);
  const refusal = linkRefusal(link.run, link.approval, link.payload);
  if (refusal) return c.html(<Problem title="Not yours to decide" message={refusal} runLink={runLink} />, 403);
  if (link.approval.kind === "question")
    return c.html(<QuestionPage run={link.run} question={link.approval} action={appPath(`/approvals/${token}`)} runLink={runLink} />);
  const intent = c.req.query("intent");
  return c.html(
    <ApprovalPage
      run={link.run}
      approval={link.approval}
      call={describeApproval(link.approval)}
      action={appPath(`/approvals/${token}`)}
      runLink={runLink}
      intent={intent}
    />,
  );
});

approvals.post("/:token", async (c) => {
  const token = c.req.param("token");
  const link = await checkApprovalLink(c, token);
  if (!link.ok) return c.html(<Problem title={link.title} message={link.message} />, link.status);
  const runLink = runPageLink(link.run.id, token);
  // Decided, expired or void already: said as the page says it, whatever the form holds (an edit's fields are not read).
  const closed = closedApproval(link.run, link.approval);
  if (closed) return c.html(<Problem title={closed.title} message={closed.message} runLink={runLink} />, closed.status);
  const form = await c.req.parseBody();
  const question = link.approval.kind === "question";
  const answer = question && typeof form.answer === "string" ? form.answer.trim() : undefined;
  if (question && !answer) return c.html(<Problem title="No answer" message="Write your answer in the box, then send it." runLink={runLink} />, 400);
  const asked = question ? { decision: "approve" as const } : formDecision(form, link.approval);
  if ("problem" in asked) return c.html(<Problem title={asked.title} message={asked.problem} runLink={runLink} />, 400);
  const note = typeof form.note === "string" && form.note.trim() ? form.note.trim().slice(0, 2000) : undefined;
  const result = await runStub(c.env, link.run.id).decide(link.approval.id, {
    ...asked,
    note,
    ...linkDecider(link.payload, link.approval),
    ...(answer !== undefined ? { answer } : asked.decision === "approve" && !("arguments" in asked) ? { remember: form.remember === "on" } : {}),
  });
  if (!result.ok) {
    // Say why from the state that refused it (the run may have ended since the link was checked).
    const now = await runView(c.env, link.run.id);
    const approval = now?.approvals.find((a) => a.id === link.approval.id);
    const closed = now && approval ? closedApproval(now, approval) : null;
    return c.html(<Problem title={closed?.title ?? "Nothing to decide here"} message={closed?.message ?? result.error} runLink={runLink} />, result.status);
  }
  if (question) return c.html(<AnsweredPage runLink={runLink} />);
  return c.html(<DecisionPage outcome={result.edited ? "edited" : result.status} approval={link.approval} runLink={runLink} />);
});

type FormDecision = Pick<DecisionRequest, "decision" | "arguments" | "result">;

/**
 * The decision a form of the approval page posted: a button's `decision` (approve, reject,
 * respond with `result`), or an edit — `edit` from the schema's fields, `edit_json` from the
 * raw JSON box — read back into arguments the run then checks against the schema.
 */
function formDecision(form: Record<string, unknown>, a: ApprovalView): FormDecision | { title: string; problem: string } {
  const d = form.decision;
  if (d === "approve" || d === "reject") return { decision: d };
  if (d === "respond")
    return typeof form.result === "string" ? { decision: d, result: form.result } : { title: "No answer", problem: "Write the call's result in the box." };
  if (d !== "edit" && d !== "edit_json") return { title: "No decision", problem: "Press Approve or Reject on the approval page." };
  const fields = d === "edit" ? argumentFields(a.input_schema, a.args) : null;
  if (d === "edit" && !fields) return { title: "Nothing to edit", problem: "This approval takes no edit from fields: approve or reject it as asked." };
  const read = fields ? argumentsFromForm(fields, form, a.args) : argumentsFromJson(typeof form.arguments_json === "string" ? form.arguments_json : "");
  return "problem" in read ? { title: "Arguments not taken", problem: read.problem } : { decision: "approve", arguments: read.args };
}
