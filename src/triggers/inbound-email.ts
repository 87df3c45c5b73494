import PostalMime from "postal-mime";
import { emailTriggers } from "../catalog";
import { readBounded } from "../http/read-body";
import { checkStart, startTriggerRun } from "../runs";
import { runIdFor } from "./delivery";
import { addressAllowed } from "./email-address";
import { emailInput } from "./email-input";
import { sha256Hex } from "../engine/ids";
import { isAutomatic } from "../email/reply-approval";
import { continueConversation, threadReference } from "./email-conversation";
import { domainOf, emailTriggerRecord } from "./email-thread";
import { parseConversationMessageId } from "../tokens/conversation-id";
import type { EmailTrigger } from "./triggers-file";
import { dmarcPassed } from "./dmarc";

/** The part of Cloudflare's ForwardableEmailMessage the trigger uses. */
export type InboundMessage = Pick<ForwardableEmailMessage, "from" | "to" | "raw" | "rawSize" | "headers" | "setReject">;

export type InboundOutcome =
  | { rejected: string }
  | { ignored: string }
  | { trigger: string; run_id: string; created: boolean }
  | { trigger: string; message: number; duplicate: boolean };

/**
 * A message arrived through Email Routing: find the trigger by the envelope
 * recipient, refuse senders outside its `allow_from` (envelope sender and the
 * From header, both) and oversized messages before they are read, parse the
 * rest with postal-mime, and start one run per message however often it is
 * delivered (a `reply: true` trigger also requires the From header to be the
 * envelope sender). Every refusal is `setReject(reason)`: the sender gets a bounce
 * saying why, and nothing starts. A trigger with `reply: true` mails its runs'
 * answers back: automatic mail to it is dropped silently (no loop with an
 * auto-responder), and a reply naming one of our answers continues that run
 * (email-conversation.ts) instead of starting one.
 */
export async function receiveEmail(env: Env, message: InboundMessage, triggers: Iterable<EmailTrigger> = emailTriggers().values()): Promise<InboundOutcome> {
  const reject = (reason: string): InboundOutcome => {
    message.setReject(reason);
    return { rejected: reason };
  };
  const to = message.to.trim().toLowerCase();
  const all = [...triggers];
  const t = all.find((x) => x.email.to === to);
  if (!t) return reject(`no trigger receives mail for ${to}`);
  // One of our own answer mails (a conversation's sender may be another trigger's address): dropped, neither a run nor a bounce to ourselves.
  if (isOurAnswer(message.headers.get("message-id"), all)) return { ignored: "one of our own answer mails" };
  if (!addressAllowed(t.email.allow_from, message.from)) return reject(`${t.email.to} does not accept mail from ${message.from}`);
  if (t.email.reply && isAutomatic(message.headers)) return { ignored: "automatic message" };
  if (message.rawSize > t.email.max_bytes) return reject(`the message is ${message.rawSize} bytes; ${t.email.to} accepts at most ${t.email.max_bytes}`);

  // rawSize is the runtime's count; the read is bounded all the same.
  const raw = await readBounded(message.raw, t.email.max_bytes);
  if (!raw) return reject(`the message is larger than ${t.email.max_bytes} bytes`);
  let parsed: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    parsed = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  } catch (err) {
    return reject(`the message could not be parsed: ${(err as Error).message}`);
  }
  // The From header is what a reader (and the worker) sees as the sender: it must pass the same list.
  const from = parsed.from?.address?.toLowerCase();
  if (!from) return reject("the message has no From address");
  if (!addressAllowed(t.email.allow_from, from)) return reject(`${t.email.to} does not accept mail from ${from} (From header)`);
  // A conversation mails its answers to the From address and takes replies only from it: that must be
  // the address Email Routing authenticated (the envelope), as for approval replies, not one it merely names.
  if (t.email.reply && from !== message.from.trim().toLowerCase())
    return reject(`the From header (${from}) and the envelope sender differ; ${t.email.to} converses only with mail sent directly from its From address`);

  if (t.email.require_dmarc && !dmarcPassed(parsed.headers))
    return reject(`${t.email.to} accepts only mail whose receiving server reports dmarc=pass (its topmost Authentication-Results header)`);

  const input = emailInput(parsed, from, to);
  // Message-IDs are chosen by the sender: keyed with the sender, one cannot pre-empt another's.
  // Without one, the bytes identify the message (a redelivery repeats them).
  const messageKey = parsed.messageId ? `message-id:${from}\n${parsed.messageId}` : `sha256:${await sha256Hex(raw)}`;
  const ref = t.email.reply ? threadReference(parsed, t.email.to) : null;
  if (ref) {
    const continued = await continueConversation(env, ref, { from, to: t.email.to, messageId: input.message_id, deliveryId: messageKey, text: input.text });
    return "error" in continued ? reject(continued.error) : { trigger: t.name, message: continued.message, duplicate: continued.duplicate };
  }
  const checked = checkStart(t.worker, input);
  if ("status" in checked) return reject(checked.error);
  const id = await runIdFor(t.name, messageKey);
  const started = await startTriggerRun(env, t, { id, checked, trigger: emailTriggerRecord(t, input) });
  return { trigger: t.name, run_id: id, created: started.created };
}

/** Whether a Message-ID is one a conversation of ours minted (conversation-id.ts), on any email trigger's domain. */
function isOurAnswer(messageId: string | null, triggers: readonly EmailTrigger[]): boolean {
  const id = messageId?.slice(0, 1000);
  return !!id && triggers.some((x) => parseConversationMessageId(id, domainOf(x.email.to)) !== null);
}
