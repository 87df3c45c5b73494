/**
 * The signature of a completion webhook (docs/triggers.md, "Completion webhooks"), as
 * Stripe signs its events: `Edgework-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>" under NOTIFY_SECRET>`. Each attempt is signed at its own time, so a
 * receiver refuses a stale one (5 minutes is the documented tolerance); the event id
 * (`Edgework-Event-Id`, and `id` in the body) stays the same across attempts.
 */

import { hex } from "../engine/ids";
import { hmacSha256 } from "../security/hmac";

export const SIGNATURE_HEADER = "Edgework-Signature";
export const EVENT_ID_HEADER = "Edgework-Event-Id";

/** The header's value for `body` signed at `at` (ms). */
export async function signatureHeader(secret: string, body: string, at: number): Promise<string> {
  const t = Math.floor(at / 1000);
  return `t=${t},v1=${hex(await hmacSha256(secret, `${t}.${body}`))}`;
}
