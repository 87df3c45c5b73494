import { describeTrigger, isoTime, prettyArgs } from "./format";
import { describedCallText, type DescribedCall } from "./described-call";

export interface ApprovalEmailInput {
  runId: string;
  workerChain: string[];
  tool: string;
  args: unknown;
  /** The call as the page and the Slack message show it (described-call.ts). */
  call: DescribedCall;
  trigger: unknown;
  expiresAt: number;
  /** The approval page; `?intent=` preselects the button there. */
  link: string;
  /** The approver may edit the call's arguments or answer in its place (on the page, `?intent=edit`). */
  editable?: boolean;
  /** Where a reply decides (Reply-To), when replies are on. */
  replyTo?: string;
  followUp?: { kind: "reminder" | "escalation"; originallyTo: string | null };
}

const SUBJECT_PREFIX = { reminder: "Reminder: approval", escalation: "Escalated: approval" } as const;

export const approvalSubject = (m: ApprovalEmailInput) =>
  `${m.followUp ? SUBJECT_PREFIX[m.followUp.kind] : "Approval"} needed: ${m.workerChain.join(" → ")} wants to call ${m.tool}`;

/** The line above everything in a follow-up: why this email came again, or to someone else. */
function followUpNote(m: ApprovalEmailInput): string | null {
  if (!m.followUp) return null;
  if (m.followUp.kind === "reminder") return "Reminder: this approval is still waiting for your decision.";
  return `This approval was escalated to you: ${m.followUp.originallyTo ?? "its approver"} has not decided it. Whoever decides first wins.`;
}

const PRE = "background:#f4f4f5;padding:12px;border-radius:6px;white-space:pre-wrap;word-break:break-word";

const REPLY_HOW = 'Or reply to this email with "yes" or "no" on the first line; the rest of that line is your note.';

export function approvalText(m: ApprovalEmailInput): string {
  const note = followUpNote(m);
  return [
    ...(note ? [note, ""] : []),
    `${m.workerChain.join(" → ")} wants to call ${m.tool}.`,
    "",
    `Run: ${m.runId}, started by ${describeTrigger(m.trigger)}`,
    `Tool: ${m.tool}`,
    // As the page shows it: the described call, and the raw arguments beside it.
    ...(m.call.summary ? ["What it will do:", describedCallText(m.call), ""] : []),
    "Arguments:",
    prettyArgs(m.args),
    "",
    `Approve: ${m.link}?intent=approve`,
    `Reject:  ${m.link}?intent=reject`,
    ...(m.editable ? [`Edit the arguments, or answer in place of the call: ${m.link}?intent=edit`] : []),
    "",
    "The link opens a page that shows the call; nothing happens until you press a button there.",
    ...(m.replyTo ? [REPLY_HOW] : []),
    `The link expires ${isoTime(m.expiresAt)}.`,
  ].join("\n");
}

/** The HTML part. JSX escapes every interpolated string: arguments are shown as text. */
export async function approvalHtml(m: ApprovalEmailInput): Promise<string> {
  const button = "display:inline-block;padding:10px 18px;margin-right:8px;border-radius:6px;color:#fff;text-decoration:none;font-weight:600";
  const note = followUpNote(m);
  const el = (
    <html lang="en">
      <body style="font-family:system-ui,sans-serif;color:#1a1a1a;max-width:640px">
        {note && <p style="padding:8px 12px;background:#fef3c7;border-radius:6px">{note}</p>}
        <h2 style="font-size:18px">
          {m.workerChain.join(" → ")} wants to call <code>{m.tool}</code>
        </h2>
        <p>
          Run <code>{m.runId}</code>, started by {describeTrigger(m.trigger)}.
        </p>
        {m.call.summary ? (
          <>
            <p>
              <code>{m.call.summary}</code>
            </p>
            <pre style={PRE}>{m.call.body}</pre>
            <p>Arguments:</p>
          </>
        ) : null}
        <pre style={PRE}>{prettyArgs(m.args)}</pre>
        <p>
          <a href={`${m.link}?intent=approve`} style={`${button};background:#15803d`}>
            Approve
          </a>
          <a href={`${m.link}?intent=reject`} style={`${button};background:#b91c1c`}>
            Reject
          </a>
        </p>
        {m.editable ? (
          <p>
            <a href={`${m.link}?intent=edit`}>Edit the arguments, or answer in place of the call</a>
          </p>
        ) : null}
        <p style="color:#555;font-size:13px">
          Each link opens a page that shows the call; nothing happens until you press a button there. {m.replyTo ? `${REPLY_HOW} ` : ""}The link expires{" "}
          {isoTime(m.expiresAt)}.
        </p>
      </body>
    </html>
  );
  return `<!doctype html>${await el}`;
}
