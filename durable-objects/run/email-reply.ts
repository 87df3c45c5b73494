/**
 * A reply to one of the run's answer mails, routed here by the reference in their
 * Reply-To (src/triggers/email-conversation.ts): the MAC must be this object's
 * (conversation-id.ts, compared in constant time), the run must have been started by
 * an email trigger with `reply: true` that still converses (this deploy's triggers:
 * its `allow_from`, `max_bytes` and `require_dmarc` hold for replies too), and the reply must come from
 * the address that started it. Then it is the conversation's next message
 * (conversation.ts: a redelivery adds none). Owns nothing. Needs from its host: `ctx`
 * (the object's id), `env` (APPROVAL_SECRET) and `row`.
 */

import { emailTriggers } from "../../src/catalog";
import { normalizeAddress } from "../../src/engine";
import type { Answer, EmailReply, SentMessage } from "../../src/runs/types";
import { sameSecret } from "../../src/security/constant-time";
import { conversationMac } from "../../src/tokens/conversation-id";
import { addressAllowed } from "../../src/triggers/email-address";
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
  const trigger = [...emailTriggers().values()].find((t) => t.email.reply && t.email.to === thread.to);
  if (!trigger) return { ok: false, status: 409, error: `${thread.to} no longer converses by email: write a new message` };
  if (typeof reply.from !== "string" || normalizeAddress(reply.from) !== thread.from || !addressAllowed(trigger.email.allow_from, thread.from))
    return { ok: false, status: 403, error: "only the address that started this conversation can reply to it" };
  if (trigger.email.require_dmarc && reply.dmarc !== true)
    return {
      ok: false,
      status: 403,
      error: `${thread.to} accepts only mail whose receiving server reports dmarc=pass (its topmost Authentication-Results header)`,
    };
  if (typeof reply.size !== "number" || reply.size > trigger.email.max_bytes)
    return { ok: false, status: 413, error: `the reply is ${reply.size} bytes; ${thread.to} accepts at most ${trigger.email.max_bytes}` };
  if (typeof reply.text !== "string" || !reply.text.trim()) return { ok: false, status: 400, error: "the reply has no text above the quoted message" };
  return conversation.send(reply.text, { id: reply.deliveryId, email: { message_id: reply.messageId } });
}
