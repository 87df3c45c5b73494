import { fromBase64Url, toBase64Url } from "./base64url";

/** A person's session on the pages: a random id (what CSRF tokens bind to) and an expiry. */
export interface Session {
  sid: string;
  exp: number;
}

const encoder = new TextEncoder();

/**
 * The session MAC key: the session secret, separated from every other use of it,
 * and bound to the current API token, so rotating API_TOKEN ends every session.
 */
const sessionKey = (secret: string, apiToken: string, usage: "sign" | "verify") =>
  crypto.subtle.importKey("raw", encoder.encode(`edgework session\u0000${secret}\u0000${apiToken}`), { name: "HMAC", hash: "SHA-256" }, false, [usage]);

/** base64url(JSON {sid, exp}) "." base64url(HMAC-SHA256). */
export async function signSession(s: Session, secret: string, apiToken: string): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify({ sid: s.sid, exp: s.exp })));
  const mac = await crypto.subtle.sign("HMAC", await sessionKey(secret, apiToken, "sign"), encoder.encode(`session.${body}`));
  return `${body}.${toBase64Url(new Uint8Array(mac))}`;
}

/** The session a cookie value carries, or null when it is forged, malformed or expired (MAC checked first, in constant time). */
export async function verifySession(value: string, secret: string, apiToken: string, now = Date.now()): Promise<Session | null> {
  const [body, mac, extra] = value.split(".");
  if (!body || !mac || extra !== undefined || value.length > 512) return null;
  try {
    const ok = await crypto.subtle.verify("HMAC", await sessionKey(secret, apiToken, "verify"), fromBase64Url(mac), encoder.encode(`session.${body}`));
    if (!ok) return null;
    const s = JSON.parse(new TextDecoder().decode(fromBase64Url(body))) as Session;
    if (typeof s?.sid !== "string" || typeof s.exp !== "number" || now > s.exp) return null;
    return { sid: s.sid, exp: s.exp };
  } catch {
    return null;
  }
}

/**
 * A CSRF token bound to something only this browser holds (its session id, or before
 * login its login nonce): HMAC under the same key, with its own label.
 */
export async function csrfToken(binding: string, secret: string, apiToken: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await sessionKey(secret, apiToken, "sign"), encoder.encode(`csrf.${binding}`));
  return toBase64Url(new Uint8Array(mac));
}

export const randomId = () => toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
