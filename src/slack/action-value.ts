import { fromBase64Url, toBase64Url } from "../tokens/base64url";

/** What a Slack button (or a modal opened from one) is for: one approval of one run, until it expires. */
export interface SlackAction {
  run: string;
  approval: string;
  exp: number;
}

/** Slack's limit on a button's `value` and a view's `private_metadata` is 2,000 and 3,000 characters. */
export const MAX_ACTION_VALUE = 2000;

const encoder = new TextEncoder();
/**
 * Domain separation: the MAC covers this label and the payload, so a button value is
 * never an approval link (tokens/approval-token.ts, same secret) nor a link one.
 */
const LABEL = "edgework slack action v1\n";

const key = (secret: string, usage: "sign" | "verify") =>
  crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);

/**
 * The value of an approval message's buttons: base64url(JSON) "." base64url(MAC), signed with
 * APPROVAL_SECRET. A presser cannot point it at another run or approval: the route decides only
 * what a verified value names.
 */
export async function signSlackAction(a: SlackAction, secret: string): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify({ run: a.run, approval: a.approval, exp: a.exp })));
  const mac = await crypto.subtle.sign("HMAC", await key(secret, "sign"), encoder.encode(LABEL + body));
  return `${body}.${toBase64Url(new Uint8Array(mac))}`;
}

/** The action a value names, when its MAC verifies (constant time: WebCrypto's verify); null otherwise. Expiry is the run's to judge. */
export async function verifySlackAction(value: string, secret: string): Promise<SlackAction | null> {
  if (value.length > MAX_ACTION_VALUE) return null;
  const [body, mac, extra] = value.split(".");
  if (!body || !mac || extra !== undefined) return null;
  try {
    if (!(await crypto.subtle.verify("HMAC", await key(secret, "verify"), fromBase64Url(mac), encoder.encode(LABEL + body)))) return null;
    const a = JSON.parse(new TextDecoder().decode(fromBase64Url(body))) as Partial<SlackAction>;
    return typeof a.run === "string" && typeof a.approval === "string" && typeof a.exp === "number" ? { run: a.run, approval: a.approval, exp: a.exp } : null;
  } catch {
    return null;
  }
}
