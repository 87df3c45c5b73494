import { addressAllowed } from "../triggers/email-address";
import type { OutgoingMail } from "./mailer";

/**
 * Mail in local dev and tests as strict as production (STRICT_LOCAL="true": set by
 * `npm run dev` and the test pool, never in production, which enforces these rules
 * itself). Local workerd sends to anyone and keeps our headers; Cloudflare does not:
 *
 * - the `send_email` binding delivers only to destination addresses verified in Email
 *   Routing, unless the sending domain is onboarded to Email Sending: here, only to
 *   EMAIL_ALLOWED_RECIPIENTS (the addresses you verified; `*@domain`; `*` for an
 *   onboarded domain), refused with production's error code otherwise;
 * - Email Sending generates the Message-ID (a sender cannot set it, and relays rewrite
 *   it): here, ours is replaced by a random one on another domain.
 *
 * A binding's own `destination_address` / `allowed_destination_addresses`
 * (wrangler.toml) are enforced by local workerd already.
 */
export const strictLocal = (env: { STRICT_LOCAL?: string }) => env.STRICT_LOCAL === "true";

/** Whether the list (comma- or space-separated: addresses, `*@domain`, `*`) lets us mail `to`. */
export function allowedRecipient(list: string | undefined, to: string): boolean {
  const entries = (list ?? "").split(/[\s,]+/).filter(Boolean);
  return entries.includes("*") || addressAllowed(entries, to);
}

/** What production throws for a recipient it may not mail (send-failure.ts reads the code). */
export class RecipientNotAllowed extends Error {
  readonly code = "E_RECIPIENT_NOT_ALLOWED";
  constructor() {
    super("E_RECIPIENT_NOT_ALLOWED: strict local mode mails only EMAIL_ALLOWED_RECIPIENTS (production: verified destination addresses)");
    this.name = "RecipientNotAllowed";
  }
}

/** The domain of the Message-IDs that replace ours (none of our trigger or reply domains). */
const PLATFORM_DOMAIN = "email.strict-local.invalid";

/** The mail as production would deliver it, and the Message-ID it then carries; throws RecipientNotAllowed. */
export function asProductionSends(env: { EMAIL_ALLOWED_RECIPIENTS?: string }, mail: OutgoingMail): { mail: OutgoingMail; messageId: string } {
  if (!allowedRecipient(env.EMAIL_ALLOWED_RECIPIENTS, mail.to)) throw new RecipientNotAllowed();
  const messageId = `<${crypto.randomUUID()}@${PLATFORM_DOMAIN}>`;
  return { mail: { ...mail, raw: withMessageId(mail.raw, messageId) }, messageId };
}

/** The raw message with its Message-ID header (and that header's folded lines) replaced by `id`. */
function withMessageId(raw: string, id: string): string {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end < 0 ? raw : raw.slice(0, end);
  const kept: string[] = [];
  let dropping = false;
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && dropping) continue;
    dropping = /^message-id\s*:/i.test(line);
    if (!dropping) kept.push(line);
  }
  return `Message-ID: ${id}\r\n${kept.join("\r\n")}${end < 0 ? "" : raw.slice(end)}`;
}
