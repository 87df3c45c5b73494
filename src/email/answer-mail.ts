import { answerHtml, answerText } from "../views/answer-email";
import { isMessageId } from "./message-id";
import { buildMime } from "./mime";

/** References keeps the thread's first id and the last ones: mail clients need no more to thread, and the header stays short. */
export const MAX_REFERENCES = 10;
const MAX_SUBJECT = 200;

/** The thread as References lists it: its ids that fit, the first and the last MAX_REFERENCES - 1. */
export function threadReferences(ids: ReadonlyArray<string | null | undefined>): string[] {
  const kept = ids.filter(isMessageId);
  return kept.length <= MAX_REFERENCES ? kept : [kept[0]!, ...kept.slice(-(MAX_REFERENCES - 1))];
}

/** `Re: <subject>`, once however many the subject has; without control characters (it came from the sender). */
export function replySubject(subject: string): string {
  let s = Array.from(subject, (ch) => (ch < " " || ch === "\u007f" ? " " : ch))
    .join("")
    .trim();
  for (let m = /^re(\[\d{1,4}\])?\s?:/i.exec(s); m; m = /^re(\[\d{1,4}\])?\s?:/i.exec(s)) s = s.slice(m[0].length).trimStart();
  s = s.length > MAX_SUBJECT ? `${s.slice(0, MAX_SUBJECT - 1)}…` : s;
  return `Re: ${s || "your message"}`;
}

/** One answer of a run, mailed to whoever started the conversation, threaded under the message it answers. */
export interface AnswerMail {
  /** The trigger's address (where replies come back). */
  from: string;
  to: string;
  /** The first message's subject, as the sender wrote it. */
  subject: string;
  answer: string;
  /** Ours: conversation-id.ts (for threading only: the platform may replace it). */
  messageId: string;
  /** Where the sender's reply goes: the conversation's reference on the reply domain (conversation-id.ts); none without one. */
  replyTo?: string;
  /** The message this answers, if its id fits. */
  inReplyTo: string | null;
  /** The thread before this answer, oldest first (bounded here). */
  thread: ReadonlyArray<string | null>;
}

/**
 * The answer as raw MIME: text and HTML (the answer escaped), `Auto-Submitted:
 * auto-replied` (RFC 3834: auto-responders must not answer it, so no mail loop).
 */
export async function answerMime(m: AnswerMail): Promise<string> {
  const references = threadReferences(m.thread);
  return buildMime({
    from: m.from,
    fromName: "",
    to: m.to,
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
    subject: replySubject(m.subject),
    text: answerText(m.answer),
    html: await answerHtml(m.answer),
    headers: {
      "Message-ID": m.messageId,
      ...(isMessageId(m.inReplyTo) ? { "In-Reply-To": m.inReplyTo } : {}),
      ...(references.length ? { References: references.join("\r\n ") } : {}),
      "Auto-Submitted": "auto-replied",
    },
  });
}
