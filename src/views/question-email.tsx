import type { ApprovalEmailInput } from "./approval-email";
import { describeTrigger, isoTime } from "./format";

/** A question's email: the approval email's input, with the question (`ctx.askHuman`) in place of a call. */
export type QuestionEmailInput = ApprovalEmailInput & { question: string };

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
/** The question's first line for a header: the model wrote it, so no CR, LF or other control character reaches the Subject. */
const firstLine = (text: string) =>
  Array.from(text.split("\n", 1)[0]!, (ch) => (ch < " " || ch === "\u007f" ? " " : ch))
    .join("")
    .trim();

export const questionSubject = (m: QuestionEmailInput) =>
  `${m.followUp?.kind === "reminder" ? "Reminder: question" : "Question"} from ${m.workerChain.join(" → ")}: ${cut(firstLine(m.question), 80)}`;

const REPLY_HOW = "Or reply to this email: the first paragraph of your reply is the answer.";

export function questionText(m: QuestionEmailInput): string {
  return [
    `${m.workerChain.join(" → ")} asks:`,
    "",
    m.question,
    "",
    `Run: ${m.runId}, started by ${describeTrigger(m.trigger)}`,
    "",
    `Answer: ${m.link}`,
    ...(m.replyTo ? [REPLY_HOW] : []),
    `The link expires ${isoTime(m.expiresAt)}; unanswered by then, the run goes on with no answer.`,
  ].join("\n");
}

/** The HTML part. JSX escapes every interpolated string: the question is shown as text. */
export async function questionHtml(m: QuestionEmailInput): Promise<string> {
  const el = (
    <html lang="en">
      <body style="font-family:system-ui,sans-serif;color:#1a1a1a;max-width:640px">
        <h2 style="font-size:18px">{m.workerChain.join(" → ")} asks</h2>
        <pre style="background:#f4f4f5;padding:12px;border-radius:6px;white-space:pre-wrap;word-break:break-word">{m.question}</pre>
        <p>
          Run <code>{m.runId}</code>, started by {describeTrigger(m.trigger)}.
        </p>
        <p>
          <a href={m.link} style="display:inline-block;padding:10px 18px;border-radius:6px;color:#fff;text-decoration:none;font-weight:600;background:#1d4ed8">
            Answer
          </a>
        </p>
        <p style="color:#555;font-size:13px">
          {m.replyTo ? `${REPLY_HOW} ` : ""}The link expires {isoTime(m.expiresAt)}.
        </p>
      </body>
    </html>
  );
  return `<!doctype html>${await el}`;
}
