/**
 * Why the `send_email` binding refused a message, and whether sending it again can
 * help. The binding throws an Error whose `code` is one of Cloudflare's documented
 * codes (Email Service, "Workers API", error codes); the Email Routing binding and
 * local workerd throw plain messages ("email to … not allowed"), read by pattern.
 * The reason names no address: it goes into run events, pages and log lines.
 */

export interface SendFailure {
  /** A documented code (`E_RECIPIENT_NOT_ALLOWED`…), or `E_UNKNOWN`. */
  code: string;
  /** True when the same send would fail again (the recipient, the sender or the quota must change first). */
  lasting: boolean;
  /** What went wrong and what fixes it, for people; no address. */
  reason: string;
}

const RECIPIENT =
  "the recipient is not a verified destination address of the account, or the send_email binding does not allow it: verify it in Email Routing, or onboard the sending domain to Email Sending";

/** Documented codes: lasting ones say what to change; the others may pass. */
const CODES: Record<string, { lasting: boolean; reason: string }> = {
  E_RECIPIENT_NOT_ALLOWED: { lasting: true, reason: RECIPIENT },
  E_RECIPIENT_SUPPRESSED: { lasting: true, reason: "the recipient is on the suppression list (an earlier message bounced or was reported as spam)" },
  E_SENDER_NOT_VERIFIED: { lasting: true, reason: "the sending domain is not verified: set up APPROVAL_FROM's domain in Email Sending" },
  E_SENDER_DOMAIN_NOT_AVAILABLE: { lasting: true, reason: "the sending domain is not onboarded to Email Sending" },
  E_DAILY_LIMIT_EXCEEDED: { lasting: true, reason: "the account's daily sending quota is used up" },
  E_VALIDATION_ERROR: { lasting: true, reason: "the message was refused as invalid" },
  E_FIELD_MISSING: { lasting: true, reason: "the message lacks a required field" },
  E_TOO_MANY_RECIPIENTS: { lasting: true, reason: "the message has too many recipients" },
  E_CONTENT_TOO_LARGE: { lasting: true, reason: "the message is larger than Email Sending accepts" },
  E_HEADER_NOT_ALLOWED: { lasting: true, reason: "the message sets a header the platform does not allow" },
  E_HEADER_USE_API_FIELD: { lasting: true, reason: "the message sets a header the platform takes only as an API field" },
  E_HEADER_VALUE_INVALID: { lasting: true, reason: "the message has an invalid header value" },
  E_HEADER_VALUE_TOO_LONG: { lasting: true, reason: "the message has a header value over 2,048 bytes" },
  E_HEADER_NAME_INVALID: { lasting: true, reason: "the message has an invalid header name" },
  E_HEADERS_TOO_LARGE: { lasting: true, reason: "the message's headers are over 16 KB" },
  E_HEADERS_TOO_MANY: { lasting: true, reason: "the message has too many headers" },
  E_RATE_LIMIT_EXCEEDED: { lasting: false, reason: "the sending rate limit was reached" },
  E_DELIVERY_FAILED: { lasting: false, reason: "the recipient's mail server did not take the message" },
  E_INTERNAL_SERVER_ERROR: { lasting: false, reason: "Email Service was unavailable" },
};

/**
 * A code-less message that says it may pass: an SMTP 4xx reply (RFC 5321: a transient
 * failure), or words to that effect. Read before the patterns below, which would make a
 * mention of a recipient or a destination address lasting.
 */
const TRANSIENT = /^\s*4\d\d\b|\b4\.\d{1,3}\.\d{1,3}\b|try again|temporar|timed? ?out|for now/i;

/** Messages without a code (Email Routing's binding, local workerd): what they say, by pattern. */
const PATTERNS: Array<[RegExp, string]> = [
  [
    /\b(email|mail) to .* not allowed|destination address .*(not allowed|not (a )?verified|unverified)|recipient .*(not allowed|not verified|unverified)/i,
    "E_RECIPIENT_NOT_ALLOWED",
  ],
  [/\b(email|mail) from .* not allowed|sender .*(not allowed|not verified|unverified)/i, "E_SENDER_NOT_VERIFIED"],
  [/suppress/i, "E_RECIPIENT_SUPPRESSED"],
  [/daily (limit|quota)|quota exceeded/i, "E_DAILY_LIMIT_EXCEEDED"],
];

const MAX_DETAIL = 200;
/** Addresses (and anything address-like: a quoted local part with spaces, any word with an "@") in a message we do not recognise. */
const QUOTED_ADDRESSES = /"[^"]*"\s*@\S*/g;
const ADDRESSES = /\S*@\S*/g;

/** What a send's error means; an error we do not recognise may pass (transient), its message kept without addresses. */
export function sendFailure(err: unknown): SendFailure {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  // Bounded before any pattern runs: a message is the binding's, or anything a fault put there.
  const message = (typeof e.message === "string" ? e.message : String(err)).slice(0, 1000);
  const given = typeof e.code === "string" && /^E_[A-Z_]{1,40}$/.test(e.code) ? e.code : undefined;
  const pattern = TRANSIENT.test(message) ? undefined : PATTERNS.find(([p]) => p.test(message))?.[1];
  const code = given && given in CODES ? given : (pattern ?? given ?? "E_UNKNOWN");
  const known = CODES[code];
  if (known) return { code, ...known };
  const detail = message.replace(QUOTED_ADDRESSES, "<address>").replace(ADDRESSES, "<address>").replace(/\s+/g, " ").trim().slice(0, MAX_DETAIL);
  return { code, lasting: false, reason: detail ? `the send failed: ${detail}` : "the send failed" };
}
