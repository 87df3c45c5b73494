import { Hono } from "hono";
import { runStub, runView } from "../../runs";
import { ApprovalPage, closedApproval, DecisionPage } from "../../views/approval-page";
import { Problem } from "../../views/layout";
import { checkApprovalLink, linkDecider, runPageLink } from "../approval-link";
import { describeApproval } from "../describe-approval";

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
  const intent = c.req.query("intent");
  return c.html(
    <ApprovalPage
      run={link.run}
      approval={link.approval}
      call={describeApproval(link.approval)}
      action={`/approvals/${token}`}
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
  const form = await c.req.parseBody();
  const decision = form.decision;
  if (decision !== "approve" && decision !== "reject") {
    return c.html(<Problem title="No decision" message="Press Approve or Reject on the approval page." runLink={runLink} />, 400);
  }
  const note = typeof form.note === "string" && form.note.trim() ? form.note.trim().slice(0, 2000) : undefined;
  const answer = await runStub(c.env, link.run.id).decide(link.approval.id, {
    decision,
    note,
    ...linkDecider(link.payload, link.approval),
    remember: form.remember === "on",
  });
  if (!answer.ok) {
    // Say why from the state that refused it (the run may have ended since the link was checked).
    const now = await runView(c.env, link.run.id);
    const approval = now?.approvals.find((a) => a.id === link.approval.id);
    const closed = now && approval ? closedApproval(now, approval) : null;
    return c.html(<Problem title={closed?.title ?? "Nothing to decide here"} message={closed?.message ?? answer.error} runLink={runLink} />, answer.status);
  }
  return c.html(<DecisionPage approved={answer.approved} approval={link.approval} runLink={runLink} />);
});
