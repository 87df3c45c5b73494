import PostalMime from "postal-mime";
import type { RunRpc } from "../runs";
import { parseObjectReference } from "../tokens/reply-reference";
import { readBounded } from "../http/read-body";
import { MAX_ANSWER_CHARS } from "../engine/approvals/ask-human";
import { domainOf } from "../triggers/email-thread";
import { soleFrom } from "../triggers/sole-from";

/** A reply is a line of text; anything near this is not a reply to decide on (and its size is SMTP's problem, not ours). */
export const MAX_REPLY_BYTES = 256 * 1024;
/** The note kept from the decision line (the approval page allows 2000; a reply line needs less). */
export const MAX_REPLY_NOTE = 500;
/** Only this much of the text body is looked at for the decision line. */
const MAX_SCANNED_CHARS = 16 * 1024;

const DECISION = /^(approve|yes|ok|reject|no)\b[\s,.:;!\-–—]*(.*)$/i;
/** `On Mon, 1 Jan 2026 at 10:00, edgework <…> wrote:` — the quote's attribution line. */
export const ATTRIBUTION = /^on\s[^\n]*wrote:$/i;

export type ReplyDecision = { decision: "approve" | "reject"; note?: string };

/**
 * The decision in a reply's text: its first line that is neither empty, quoted
 * (`>`), nor the "On … wrote:" attribution, must start with approve/yes/ok or
 * reject/no as a word; the rest of that line is the note. Null for anything else.
 */
export function parseReplyDecision(text: string): ReplyDecision | null {
  for (const raw of text.slice(0, MAX_SCANNED_CHARS).split(/\r?\n/)) {
    const line = raw.trim().slice(0, 2 * MAX_REPLY_NOTE);
    if (!line || line.startsWith(">") || ATTRIBUTION.test(line)) continue;
    const m = DECISION.exec(line);
    if (!m) return null;
    const decision = /^(approve|yes|ok)$/i.test(m[1]!) ? "approve" : "reject";
    const note = m[2]!.trim().slice(0, MAX_REPLY_NOTE);
    return note ? { decision, note } : { decision };
  }
  return null;
}

const NO_DECISION =
  'no decision found: the first line of the reply must start with "yes" (or approve, ok) or "no" (or reject); the rest of that line is the note';

/**
 * A reply's answer to a question: its first paragraph (lines up to the first empty
 * line, the quote or the "On … wrote:" line), skipping leading empty lines; trimmed,
 * at most MAX_ANSWER_CHARS. Null when there is none.
 */
export function parseReplyAnswer(text: string): string | null {
  const lines: string[] = [];
  for (const raw of text.slice(0, MAX_SCANNED_CHARS).split(/\r?\n/)) {
    const line = raw.trimEnd();
    if (line.trimStart().startsWith(">") || ATTRIBUTION.test(line.trim())) break;
    if (!line.trim()) {
      if (lines.length) break;
      continue;
    }
    lines.push(line.trim());
  }
  const answer = lines.join("\n").slice(0, MAX_ANSWER_CHARS);
  return answer || null;
}

const localOf = (address: string) => address.slice(0, address.lastIndexOf("@"));

/** Whether a message is addressed to the approval reply domain (only when APPROVAL_REPLY_DOMAIN is set). */
export function isApprovalReply(message: { to: string }, env: Env): boolean {
  return !!env.APPROVAL_REPLY_DOMAIN && message.to.includes("@") && domainOf(message.to) === env.APPROVAL_REPLY_DOMAIN.toLowerCase();
}

/**
 * Auto-replies (out of office, bounces) are dropped silently: bouncing them back could loop.
 * Besides RFC 3834's Auto-Submitted, responders that ignore it mark themselves with X-Autoreply or X-Autorespond.
 */
export function isAutomatic(headers: Headers): boolean {
  const auto = headers.get("auto-submitted")?.trim().toLowerCase();
  const precedence = headers.get("precedence")?.trim().toLowerCase();
  return (
    (!!auto && auto !== "no") ||
    precedence === "bulk" ||
    precedence === "auto_reply" ||
    precedence === "junk" ||
    headers.has("x-autoreply") ||
    headers.has("x-autorespond")
  );
}

type Verdict = { accept: true } | { accept: false; reason: string } | { ignore: string };

/**
 * What to do with one reply: decide, refuse with a reason (`setReject`: an SMTP
 * rejection during delivery, so the sender learns why at once and nothing is sent
 * to a possibly forged address afterwards), or drop an automatic message silently.
 */
async function judge(message: ForwardableEmailMessage, env: Env): Promise<Verdict> {
  if (!env.APPROVAL_SECRET) return { accept: false, reason: "approval replies are not enabled on this deployment" };
  if (isAutomatic(message.headers)) return { ignore: "automatic message" };
  const ref = parseObjectReference(localOf(message.to));
  if (!ref) return { accept: false, reason: "this address names no approval; reply to the approval email as it was sent" };
  if (message.rawSize > MAX_REPLY_BYTES)
    return { accept: false, reason: `the reply is too large (over ${MAX_REPLY_BYTES / 1024} KiB); reply with just "yes" or "no" and a short note` };
  const raw = await readBounded(message.raw, MAX_REPLY_BYTES);
  if (!raw) return { accept: false, reason: `the reply is too large (over ${MAX_REPLY_BYTES / 1024} KiB)` };
  const email = await PostalMime.parse(raw, { maxNestingDepth: 10, maxHeadersSize: 64 * 1024 });
  // The envelope sender is what Email Routing authenticated (SPF/DKIM/DMARC); DMARC
  // aligns it with the From header, so a reply must carry one naming the same address:
  // a missing, empty or unparsable From, or one naming several addresses (sole-from.ts), is refused like one naming someone else.
  const sender = message.from.trim().toLowerCase();
  const headerFrom = soleFrom(email.headers, { sender: true });
  if ("problem" in headerFrom) return { accept: false, reason: `${headerFrom.problem}; reply directly from the address the approval was sent to` };
  if (headerFrom.address !== sender)
    return { accept: false, reason: "the From header and the envelope sender differ; reply directly from the address the approval was sent to" };
  const text = email.text ?? "";
  const decision = parseReplyDecision(text);
  const answer = parseReplyAnswer(text);
  if (!decision && !answer) return { accept: false, reason: NO_DECISION };

  let stub: RunRpc;
  try {
    stub = env.RUNS.get(env.RUNS.idFromString(ref.objectId)) as unknown as RunRpc;
  } catch {
    return { accept: false, reason: "this address names no approval; reply to the approval email as it was sent" };
  }
  const result = await stub.decideByReply(ref.mac, {
    decision,
    answer,
    noDecision: NO_DECISION,
    by: `email reply (${sender})`,
    decider: { email: sender, via: "reply" },
    replyFrom: sender,
  });
  return result.ok ? { accept: true } : { accept: false, reason: result.error };
}

/** The `email()` entry for messages to APPROVAL_REPLY_DOMAIN: a reply decides, or is refused with a reason. */
export async function handleApprovalReply(message: ForwardableEmailMessage, env: Env, _ctx: ExecutionContext): Promise<void> {
  const verdict = await judge(message, env);
  if ("ignore" in verdict) return;
  if (verdict.accept) return;
  // The reason only: it names no address, reference or reply text.
  console.warn("approval reply refused:", verdict.reason);
  message.setReject(verdict.reason);
}
