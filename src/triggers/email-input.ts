import type { Email } from "postal-mime";
import { htmlToText } from "../email/html-text";

/** What an inbound message gives its worker; every field bounded (the run's row holds it). */
export interface EmailInput {
  /** The From header's address (checked against allow_from like the envelope sender). */
  from: string;
  /** The address the message was delivered to (the envelope recipient, the trigger's `to`). */
  to: string;
  subject: string;
  /** The plain-text body, else text derived from the HTML body, cut to MAX_TEXT characters. */
  text: string;
  message_id: string | null;
  /** Names, types and sizes only: the bytes stay out of the run for now. */
  attachments: Array<{ filename: string | null; mime_type: string; size: number }>;
}

export const MAX_TEXT = 100_000;
const MAX_SUBJECT = 1_000;
const MAX_ATTACHMENTS = 100;
const MAX_NAME = 255;

/** A message as every email trigger's worker must accept it; checked when the catalog loads. */
export const SAMPLE_EMAIL_INPUT: EmailInput = {
  from: "someone@example.com",
  to: "support@example.com",
  subject: "Hello",
  text: "Hello.",
  message_id: "<sample@example.com>",
  attachments: [{ filename: "notes.txt", mime_type: "text/plain", size: 6 }],
};

const cut = (s: string, max: number, marker = "") => (s.length > max ? s.slice(0, max) + marker : s);

const byteSize = (content: Email["attachments"][number]["content"]) =>
  typeof content === "string" ? new TextEncoder().encode(content).length : content.byteLength;

/** The text part, else (postal-mime derives none) the HTML part read as text; bounded either way. */
function bodyText(parsed: Email): string {
  if (parsed.text !== undefined || parsed.html === undefined) {
    const text = parsed.text ?? "";
    return cut(text, MAX_TEXT, `\n[… ${text.length - MAX_TEXT} more characters cut]`);
  }
  const derived = htmlToText(parsed.html, MAX_TEXT);
  return derived.complete ? derived.text : `${derived.text}\n[… the rest of the HTML body cut]`;
}

export function emailInput(parsed: Email, from: string, to: string): EmailInput {
  return {
    from,
    to,
    subject: cut(parsed.subject ?? "", MAX_SUBJECT),
    text: bodyText(parsed),
    message_id: parsed.messageId ? cut(parsed.messageId, 998) : null,
    attachments: parsed.attachments.slice(0, MAX_ATTACHMENTS).map((a) => ({
      filename: a.filename === null ? null : cut(a.filename, MAX_NAME),
      mime_type: cut(a.mimeType, MAX_NAME),
      size: byteSize(a.content),
    })),
  };
}
