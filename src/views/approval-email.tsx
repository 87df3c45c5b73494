import { describeTrigger, isoTime, prettyArgs } from "./format";

export interface ApprovalEmailInput {
  runId: string;
  workerChain: string[];
  tool: string;
  args: unknown;
  trigger: unknown;
  expiresAt: number;
  /** The approval page; `?intent=` preselects the button there. */
  link: string;
}

export const approvalSubject = (m: ApprovalEmailInput) => `Approval needed: ${m.workerChain.join(" → ")} wants to call ${m.tool}`;

export function approvalText(m: ApprovalEmailInput): string {
  return [
    `${m.workerChain.join(" → ")} wants to call ${m.tool}.`,
    "",
    `Run: ${m.runId}, started by ${describeTrigger(m.trigger)}`,
    `Tool: ${m.tool}`,
    "Arguments:",
    prettyArgs(m.args),
    "",
    `Approve: ${m.link}?intent=approve`,
    `Reject:  ${m.link}?intent=reject`,
    "",
    "The link opens a page that shows the call; nothing happens until you press a button there.",
    `The link expires ${isoTime(m.expiresAt)}.`,
  ].join("\n");
}

/** The HTML part. JSX escapes every interpolated string: arguments are shown as text. */
export async function approvalHtml(m: ApprovalEmailInput): Promise<string> {
  const button = "display:inline-block;padding:10px 18px;margin-right:8px;border-radius:6px;color:#fff;text-decoration:none;font-weight:600";
  const el = (
    <html>
      <body style="font-family:system-ui,sans-serif;color:#1a1a1a;max-width:640px">
        <h2 style="font-size:18px">
          {m.workerChain.join(" → ")} wants to call <code>{m.tool}</code>
        </h2>
        <p>
          Run <code>{m.runId}</code>, started by {describeTrigger(m.trigger)}.
        </p>
        <pre style="background:#f4f4f5;padding:12px;border-radius:6px;white-space:pre-wrap;word-break:break-word">{prettyArgs(m.args)}</pre>
        <p>
          <a href={`${m.link}?intent=approve`} style={`${button};background:#15803d`}>
            Approve
          </a>
          <a href={`${m.link}?intent=reject`} style={`${button};background:#b91c1c`}>
            Reject
          </a>
        </p>
        <p style="color:#555;font-size:13px">
          Each link opens a page that shows the call; nothing happens until you press a button there. The link expires {isoTime(m.expiresAt)}.
        </p>
      </body>
    </html>
  );
  return "<!doctype html>" + (await el);
}
