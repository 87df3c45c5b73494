/** What an answer mail says under the answer (the text part's last line, the HTML part's footer). */
const CONTINUE = "Reply to this email to continue the conversation.";

/** The text part: the run's answer as is, then how to go on. */
export const answerText = (answer: string) => `${answer}\n\n-- \n${CONTINUE}\n`;

/** The HTML part. JSX escapes every interpolated string: the answer (model output) is shown as text. */
export async function answerHtml(answer: string): Promise<string> {
  const el = (
    <html lang="en">
      <body style="font-family:system-ui,sans-serif;color:#1a1a1a;max-width:640px">
        <div style="white-space:pre-wrap;word-break:break-word">{answer}</div>
        <p style="color:#555;font-size:13px">{CONTINUE}</p>
      </body>
    </html>
  );
  return `<!doctype html>${await el}`;
}
