import PostalMime from "postal-mime";
import { emailTriggers } from "../catalog";
import { isMessageId } from "../email/message-id";
import { isApprovalReply, isAutomatic } from "../email/reply-approval";
import { replyText } from "../email/reply-text";
import { MAX_MESSAGE_CHARS } from "../engine/run/conversation";
import { sha256Hex } from "../engine/ids";
import { readBounded } from "../http/read-body";
import type { RunRpc } from "../runs";
import type { EmailReply } from "../runs/types";
import { parseConversationReference } from "../tokens/conversation-id";
import { dmarcPassed } from "./dmarc";
import { emailInput } from "./email-input";
import { soleFrom } from "./sole-from";
import type { InboundMessage, InboundOutcome } from "./inbound-email";
import type { EmailTrigger } from "./triggers-file";

/** Why a reply whose reference does not check out is refused: it says no more (no MAC, no object). */
export const NO_CONVERSATION = "this reply names no conversation of ours; write a new message to start one";

const localOf = (address: string) => address.slice(0, address.lastIndexOf("@"));

/** The run object and MAC a message to the reply domain names as a conversation (conversation-id.ts), else null (an approval's, or nothing). */
export function conversationAddressed(message: { to: string }, env: Env): { objectId: string; mac: string } | null {
  return isApprovalReply(message, env) ? parseConversationReference(localOf(message.to.trim())) : null;
}

/**
 * A reply to one of our answer mails, through its Reply-To (conversation-id.ts):
 * automatic mail is dropped silently (no loop with an auto-responder); a message over
 * every conversing trigger's `max_bytes` is refused before it is read; the From header
 * must be the envelope sender (what Email Routing authenticated: the conversation
 * checks that address). The run the reference names checks its MAC, its trigger and
 * the sender (durable-objects/run/email-reply.ts) and takes the text above the quote
 * as its next message. Every refusal is `setReject(reason)`; a reference that does
 * not check out starts nothing.
 */
export async function receiveConversationReply(
  env: Env,
  message: InboundMessage,
  ref: { objectId: string; mac: string },
  triggers: Iterable<EmailTrigger> = emailTriggers().values(),
): Promise<InboundOutcome> {
  const reject = (reason: string): InboundOutcome => {
    message.setReject(reason);
    return { rejected: reason };
  };
  if (isAutomatic(message.headers)) return { ignored: "automatic message" };
  // The run knows its trigger (and checks its max_bytes); before that, no conversation is larger than the largest of them.
  const limit = Math.max(0, ...[...triggers].filter((t) => t.email.reply).map((t) => t.email.max_bytes));
  if (!limit) return reject(NO_CONVERSATION);
  if (message.rawSize > limit) return reject(`the reply is ${message.rawSize} bytes; a conversation accepts at most ${limit}`);
  const raw = await readBounded(message.raw, limit);
  if (!raw) return reject(`the reply is larger than ${limit} bytes`);
  let parsed: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    parsed = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  } catch (err) {
    return reject(`the reply could not be parsed: ${(err as Error).message}`);
  }
  // As a first mail is read (inbound-email.ts): one address in From, and a Sender, if any, naming it.
  const sole = soleFrom(parsed.headers, { sender: true });
  if ("problem" in sole) return reject(`${sole.problem}; a conversation takes replies from one sender, named alone in From`);
  const from = sole.address;
  if (from !== message.from.trim().toLowerCase())
    return reject(`the From header (${from}) and the envelope sender differ; reply directly from the address that started the conversation`);
  const input = emailInput(parsed, from, message.to);
  // As for a first message: keyed with the sender, one cannot pre-empt another's id; without one, the bytes identify it.
  const deliveryId = parsed.messageId ? `message-id:${from}\n${parsed.messageId}` : `sha256:${await sha256Hex(raw)}`;
  // The run knows its trigger, so it decides whether `require_dmarc` refuses this reply.
  const dmarc = dmarcPassed(parsed.headers);
  const continued = await continueConversation(env, ref, { from, messageId: input.message_id, deliveryId, text: input.text, size: message.rawSize, dmarc });
  return "error" in continued ? reject(continued.error) : continued;
}

/**
 * Hands a reply to the run its reference names, which checks the MAC, its trigger and
 * the sender and takes the text above the quote as the conversation's next message. An
 * object id that is not one of this namespace is refused like a bad MAC.
 */
async function continueConversation(
  env: Env,
  ref: { objectId: string; mac: string },
  reply: EmailReply,
): Promise<{ message: number; duplicate: boolean } | { error: string }> {
  let stub: RunRpc;
  try {
    stub = env.RUNS.get(env.RUNS.idFromString(ref.objectId)) as unknown as RunRpc;
  } catch {
    return { error: NO_CONVERSATION };
  }
  const message: EmailReply = {
    from: reply.from,
    messageId: isMessageId(reply.messageId) ? reply.messageId : null,
    deliveryId: await sha256Hex(reply.deliveryId),
    text: replyText(reply.text, MAX_MESSAGE_CHARS),
    size: reply.size,
    dmarc: reply.dmarc,
  };
  const answer = await stub.continueByEmail(ref.mac, message);
  return answer.ok ? { message: answer.message, duplicate: answer.duplicate === true } : { error: answer.error };
}
