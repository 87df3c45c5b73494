import { fromBase64Url, toBase64Url } from "./base64url";

/** What an approval link grants: deciding one approval of one run, until it expires. */
export interface ApprovalTokenPayload {
  run: string;
  approval: string;
  /** Expiry, ms since the epoch (the approval's own expiry). */
  exp: number;
  /** Whom this link was emailed to (an escalation goes to others), or who opened it from the inbox: who decided, on the record and checked against the policy. */
  to?: string;
  /** Absent: an emailed link. `inbox`: signed for a session of the inbox; `access`: for a person Cloudflare Access names (`to`). */
  via?: "inbox" | "access";
}

export type TokenCheck =
  | { ok: true; payload: ApprovalTokenPayload }
  | { ok: false; status: 403; reason: "invalid" }
  | { ok: false; status: 410; reason: "expired"; payload: ApprovalTokenPayload };

const encoder = new TextEncoder();

const hmacKey = (secret: string, usage: "sign" | "verify") =>
  crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);

/**
 * `ApprovalToken`: base64url(JSON payload) "." base64url(HMAC-SHA256(payload part)).
 * Signed with APPROVAL_SECRET; the MAC covers the encoded payload exactly as sent.
 */
export async function signApprovalToken(payload: ApprovalTokenPayload, secret: string): Promise<string> {
  const body = toBase64Url(
    encoder.encode(
      JSON.stringify({
        run: payload.run,
        approval: payload.approval,
        exp: payload.exp,
        ...(payload.to ? { to: payload.to } : {}),
        ...(payload.via ? { via: payload.via } : {}),
      }),
    ),
  );
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), encoder.encode(body));
  return `${body}.${toBase64Url(new Uint8Array(mac))}`;
}

/**
 * Verifies the MAC in constant time (WebCrypto's HMAC verify) before reading the
 * payload; a valid but expired token says so (410), anything else is 403.
 */
export async function verifyApprovalToken(token: string, secret: string, now = Date.now()): Promise<TokenCheck> {
  const invalid = { ok: false, status: 403, reason: "invalid" } as const;
  const [body, mac, extra] = token.split(".");
  if (!body || !mac || extra !== undefined || token.length > 2048) return invalid;
  let macBytes: Uint8Array;
  try {
    macBytes = fromBase64Url(mac);
  } catch {
    return invalid;
  }
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret, "verify"), macBytes, encoder.encode(body));
  if (!valid) return invalid;
  let payload: ApprovalTokenPayload;
  try {
    payload = JSON.parse(new TextDecoder().decode(fromBase64Url(body)));
  } catch {
    return invalid;
  }
  if (typeof payload?.run !== "string" || typeof payload.approval !== "string" || typeof payload.exp !== "number") return invalid;
  if (payload.to !== undefined && typeof payload.to !== "string") return invalid;
  if (payload.via !== undefined && payload.via !== "inbox" && payload.via !== "access") return invalid;
  if (now > payload.exp) return { ok: false, status: 410, reason: "expired", payload };
  return { ok: true, payload };
}
