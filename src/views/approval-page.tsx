import { TERMINAL, type ApprovalView, type RunView } from "../runs/types";
import { AttachmentList, attachmentsOnPath } from "./attachments";
import { CallView } from "./call-view";
import { describeTrigger, isoTime } from "./format";
import { Badge, Page } from "./layout";
import type { CallDescription } from "../engine/types/toolset";
import { EditForm, NoteField, RespondForm } from "./change-call-forms";

/** What will happen, on whose behalf — and two forms that POST. Showing it changes nothing. */
export function ApprovalPage(props: { run: RunView; approval: ApprovalView; call?: CallDescription; action: string; runLink: string; intent?: string }) {
  const { run, approval: a } = props;
  const attachments = attachmentsOnPath(run.call_tree, a.call_path);
  return (
    <Page title={`Approve ${a.tool}?`}>
      <h1>
        {a.worker_chain.join(" → ")} wants to call <code>{a.tool}</code>
      </h1>
      <p>
        Run <a href={props.runLink}>{run.id}</a> of worker <code>{run.worker}</code>, started by {describeTrigger(run.trigger)}. <Badge status={run.status} />
      </p>
      <h2>{props.call ? "What it will do" : "Arguments"}</h2>
      <CallView call={props.call} args={a.args} />
      {attachments.length ? (
        <>
          <h2>Attachments the asking worker was given</h2>
          <AttachmentList attachments={attachments} />
        </>
      ) : null}
      <p>
        Call path <code>{a.call_path}</code>. This link expires {isoTime(a.expires_at)}.
      </p>
      <form method="post" action={props.action}>
        <NoteField />
        <p>
          <label>
            <input type="checkbox" name="remember" value="on" /> Also approve identical calls ({a.tool} with these arguments) for the rest of this run
          </label>
        </p>
        <button type="submit" name="decision" value="approve" class={`approve${props.intent === "approve" ? " primary" : ""}`}>
          Approve
        </button>
        <button type="submit" name="decision" value="reject" class={`reject${props.intent === "reject" ? " primary" : ""}`}>
          Reject
        </button>
      </form>
      {a.editable && a.input_schema ? (
        <>
          <EditForm approval={a} action={props.action} open={props.intent === "edit"} />
          <RespondForm action={props.action} open={props.intent === "edit" || props.intent === "respond"} />
        </>
      ) : (
        <p class="hint">This call is approved or rejected as asked: its policy allows no edit and no answer in its place.</p>
      )}
    </Page>
  );
}

/** What the decision did, in the words of the page that follows it. */
const OUTCOME = {
  approved: { title: "Approved", lead: "The run continues with", after: "." },
  edited: { title: "Approved with your edits", lead: "The run continues with", after: ", with the arguments you sent; the model is told they were edited." },
  rejected: { title: "Rejected", lead: "The run continues without", after: "; the model is told it was rejected." },
  responded: { title: "Answered", lead: "The run continues without", after: ": your answer is its result, and the model is told a person gave it." },
} as const;

export function DecisionPage(props: { outcome: keyof typeof OUTCOME; approval: ApprovalView; runLink: string }) {
  const o = OUTCOME[props.outcome];
  return (
    <Page title={o.title}>
      <h1>{o.title}</h1>
      <p>
        {o.lead} <code>{props.approval.tool}</code>
        {o.after}
      </p>
      <p>
        <a href={props.runLink}>See the run</a>
      </p>
    </Page>
  );
}

/** Why an approval can no longer be decided, for the person holding its link; null while it can be. */
export function closedApproval(run: RunView, a: ApprovalView): { status: 409 | 410; title: string; message: string } | null {
  if (a.status === "expired") {
    return {
      status: 410,
      title: "This approval has expired",
      message: `Nobody decided it before ${isoTime(a.expires_at)}, so it counted as a rejection and the model was told.`,
    };
  }
  // A pending row of an ended run is void too (runs that ended before voiding existed).
  if (a.status === "voided" || (a.status === "pending" && TERMINAL.includes(run.status))) {
    return {
      status: 409,
      title: "This approval is void",
      message: `The run ended (${run.status}), so this approval is void: deciding it would change nothing.`,
    };
  }
  if (a.status !== "pending")
    return { status: 409, title: "Already decided", message: `This approval was already ${a.status}${a.decided_by ? ` by ${a.decided_by}` : ""}.` };
  return null;
}
