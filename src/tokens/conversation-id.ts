import { hex } from "../engine/ids";
import { objectReference, parseObjectReference, truncatedMac } from "./reply-reference";

/**
 * The Message-ID of an answer a run mails back (an email trigger with `reply: true`):
 * `<ref.n@domain>`, where
 *
 * - ref = base32(run object id ‖ MAC), laid out as an approval's reply reference
 *   (reply-reference.ts): the object id routes the sender's reply to the run;
 * - MAC = HMAC-SHA256(APPROVAL_SECRET, "conversation\0" ‖ object id), truncated to
 *   56 bits: its own prefix, so no approval reference is a conversation id or back;
 * - n = the answer's number in the conversation (1: the answer to the first mail),
 *   unsigned: it only makes each Message-ID unique;
 * - domain = the trigger's domain, where the reply comes back.
 *
 * It proves the reply answers a mail this deployment sent for that run, nothing more:
 * whoever holds the mail can quote the id, so the run also checks the sender.
 */

/** Answer numbers: at most the conversation's messages (durable-objects/run/conversation.ts). */
const N = /^[1-9][0-9]{0,2}$/;

const macBytes = (objectId: string, secret: string) => truncatedMac(secret, `conversation\0${objectId.toLowerCase()}`);

/** The MAC (hex) every answer id of one run object carries; compare with `sameSecret`. */
export const conversationMac = async (objectId: string, secret: string) => hex(await macBytes(objectId, secret));

/** The Message-ID of the run's `n`-th answer, angle brackets included; null if the object id is not a Durable Object id. */
export async function conversationMessageId(objectId: string, n: number, domain: string, secret: string): Promise<string | null> {
  const ref = objectReference(objectId, await macBytes(objectId, secret));
  return ref ? `<${ref}.${n}@${domain.toLowerCase()}>` : null;
}

/**
 * The run object and MAC of one of our Message-IDs on `domain` (case-insensitive);
 * null for any other id (another domain, another grammar). Checks nothing cryptographic.
 */
export function parseConversationMessageId(id: string, domain: string): { objectId: string; mac: string } | null {
  const m = /^<([a-z2-7]+)\.([0-9]+)@([^<>@\s]+)>$/i.exec(id.trim());
  if (!m || !N.test(m[2]!) || m[3]!.toLowerCase() !== domain.toLowerCase()) return null;
  return parseObjectReference(m[1]!);
}
