import { toBase32, fromBase32 } from "./base32";
import { hex } from "../engine/ids";
import { hmacSha256 } from "../security/hmac";

/**
 * The local part of an approval email's Reply-To: `base32(run object id ‖ MAC)`.
 *
 * - The run's Durable Object id (32 bytes) routes the reply without an index
 *   (run ids may be up to 128 characters; the object id is fixed-size).
 * - MAC = HMAC-SHA256(APPROVAL_SECRET, "reply\0" ‖ object id ‖ "\0" ‖ approval id),
 *   truncated to 56 bits; the run finds which of its approvals it names.
 *
 * 39 bytes → 63 lowercase base32 characters: inside the 64-octet local-part limit,
 * and indifferent to mail systems that change case. 56 bits suffice because the
 * MAC is checked online only, one guess per email, each of which must also come
 * from the address the approval was sent to, while the approval is pending
 * (single-use, expiring within days): about 2^55 emails per expected forgery.
 *
 * The layout (`objectReference`, `parseObjectReference`) is shared with the
 * Message-IDs of answer mails (conversation-id.ts), whose MAC has its own prefix.
 */
export const OBJECT_ID_BYTES = 32;
export const MAC_BYTES = 7;
const REF_LENGTH = Math.ceil(((OBJECT_ID_BYTES + MAC_BYTES) * 8) / 5);

/** HMAC-SHA256 of `data`, truncated to MAC_BYTES. */
export const truncatedMac = async (secret: string, data: string) => (await hmacSha256(secret, data)).slice(0, MAC_BYTES);

const macBytes = (objectId: string, approvalId: string, secret: string) => truncatedMac(secret, `reply\0${objectId.toLowerCase()}\0${approvalId}`);

/** The truncated MAC (hex) binding a reply reference to one approval of one run object; compare with `sameSecret`. */
export const replyMac = async (objectId: string, approvalId: string, secret: string) => hex(await macBytes(objectId, approvalId, secret));

/** `base32(object id ‖ mac)`; null if the object id is not a 64-hex Durable Object id. */
export function objectReference(objectId: string, mac: Uint8Array): string | null {
  if (!/^[0-9a-f]{64}$/i.test(objectId)) return null;
  const ref = new Uint8Array(OBJECT_ID_BYTES + MAC_BYTES);
  ref.set(Uint8Array.from(objectId.match(/../g)!, (h) => parseInt(h, 16)));
  ref.set(mac, OBJECT_ID_BYTES);
  return toBase32(ref);
}

/** The Reply-To local part for one approval; null if the object id is not a 64-hex Durable Object id. */
export const replyReference = async (objectId: string, approvalId: string, secret: string) =>
  objectReference(objectId, await macBytes(objectId, approvalId, secret));

/** Splits a reference into object id (hex) and MAC (hex); null for anything else. Checks nothing cryptographic. */
export function parseObjectReference(ref: string): { objectId: string; mac: string } | null {
  if (ref.length !== REF_LENGTH) return null;
  const bytes = fromBase32(ref, OBJECT_ID_BYTES + MAC_BYTES);
  if (!bytes) return null;
  return { objectId: hex(bytes.slice(0, OBJECT_ID_BYTES)), mac: hex(bytes.slice(OBJECT_ID_BYTES)) };
}
