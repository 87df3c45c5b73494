/**
 * A reply to one of the run's answer mails, routed here by the object id in our
 * Message-ID (src/triggers/email-conversation.ts): the MAC must be this object's
 * (conversation-id.ts, compared in constant time), the run must have been started
 * by a `reply: true` email trigger, and the reply must reach that trigger's address
 * from the address that started it. Then it is the conversation's next message
 * (conversation.ts: a redelivery adds none). Owns nothing. Needs from its host: `ctx` (the object's id),
 * `env` (APPROVAL_SECRET) and `row`.
 */

import { normalizeAddress } from "../../src/engine";
import type { Answer, EmailReply, SentMessage } from "../../src/runs/types";
import { sameSecret } from "../../src/security/constant-time";
import { conversationMac } from "../../src/tokens/conversation-id";
import { NO_CONVERSATION } from "../../src/triggers/email-conversation";
import { emailThread } from "../../src/triggers/email-thread";
import { parse } from "../sql";
import type { RunConversation } from "./conversation";
import type { RunHost } from "./host";

export async function continueByEmail(
  host: Pick<RunHost, "ctx" | "env" | "row">,
  conversation: RunConversation,
  mac: string,
  reply: EmailReply,
): Promise<Answer<SentMessage>> {
  const secret = host.env.APPROVAL_SECRET;
  if (!secret || typeof mac !== "string" || !(await sameSecret(mac, await conversationMac(host.ctx.id.toString(), secret))))
    return { ok: false, status: 403, error: NO_CONVERSATION };
  const run = host.row();
  if (!run) return { ok: false, status: 404, error: "the conversation this reply belongs to has ended and was deleted; write a new message" };
  const thread = emailThread(parse(run.trigger));
  if (!thread) return { ok: false, status: 409, error: "this conversation does not take replies by email" };
  // Another trigger on the domain parses our ids too; its allow_from is not this conversation's.
  if (typeof reply.to !== "string" || normalizeAddress(reply.to) !== thread.to)
    return { ok: false, status: 403, error: `this conversation is with ${thread.to}: reply to that address` };
  if (typeof reply.from !== "string" || normalizeAddress(reply.from) !== thread.from)
    return { ok: false, status: 403, error: "only the address that started this conversation can reply to it" };
  if (typeof reply.text !== "string" || !reply.text.trim()) return { ok: false, status: 400, error: "the reply has no text above the quoted message" };
  return conversation.send(reply.text, { id: reply.deliveryId, email: { message_id: reply.messageId } });
}
