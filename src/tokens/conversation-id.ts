import { hex } from "../engine/ids";
import { objectReference, parseObjectReference, truncatedMac } from "./reply-reference";

/**
 * What carries a conversation by mail (an email trigger with `reply: true`) from one
 * answer to the sender's reply: the answer's Reply-To, `c<ref>@APPROVAL_REPLY_DOMAIN`,
 * where
 *
 * - ref = base32(run object id ‖ MAC), laid out as an approval's reply reference
 *   (reply-reference.ts): the object id routes the reply to the run;
 * - MAC = HMAC-SHA256(APPROVAL_SECRET, "conversation\0" ‖ object id), truncated to
 *   56 bits: its own prefix, so no approval reference is a conversation's or back;
 * - `c` tells the reply domain's handler a conversation (64 characters, the local
 *   part's limit) from an approval (63, reply-reference.ts).
 *
 * Reply-To, unlike Message-ID, is the sender's to set: Email Sending generates the
 * Message-ID and relays rewrite it, so an answer's Message-ID (`<ref.n@domain>` of the
 * trigger's domain) and the In-Reply-To/References of a reply only thread the mails in
 * mail clients; nothing is routed by them.
 *
 * A reference proves the reply answers a mail this deployment sent for that run,
 * nothing more: whoever holds the mail can copy it, so the run also checks the sender.
 */

const PREFIX = "c";

const macBytes = (objectId: string, secret: string) => truncatedMac(secret, `conversation\0${objectId.toLowerCase()}`);

/** The MAC (hex) every reference of one run object carries; compare with `sameSecret`. */
export const conversationMac = async (objectId: string, secret: string) => hex(await macBytes(objectId, secret));

/** The Reply-To local part of the run's answers; null if the object id is not a Durable Object id. */
export async function conversationReference(objectId: string, secret: string): Promise<string | null> {
  const ref = objectReference(objectId, await macBytes(objectId, secret));
  return ref && `${PREFIX}${ref}`;
}

/** The run object and MAC a local part names (case-insensitive); null for anything else. Checks nothing cryptographic. */
export function parseConversationReference(local: string): { objectId: string; mac: string } | null {
  if (local.length < 2 || local[0]!.toLowerCase() !== PREFIX) return null;
  return parseObjectReference(local.slice(1));
}

/** The Message-ID of the run's `n`-th answer on `domain` (angle brackets included): unique, for threading only; null as conversationReference. */
export async function conversationMessageId(objectId: string, n: number, domain: string, secret: string): Promise<string | null> {
  const ref = await conversationReference(objectId, secret);
  return ref && `<${ref}.${n}@${domain.toLowerCase()}>`;
}
