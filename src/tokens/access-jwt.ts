import { fromBase64Url } from "./base64url";

/** Cloudflare Access settings: the team domain (`myteam` or `myteam.cloudflareaccess.com`) and the application's AUD tag. */
export interface AccessConfig {
  teamDomain: string;
  aud: string;
}

/**
 * `sub`: who the token proves, one identity per person or service token. A person's is
 * Access's user id; a service token's JWT has an empty `sub` (every service token the
 * same one), so it is `service-token:` and its client id (`common_name`).
 */
export type AccessCheck = { ok: true; email: string | null; sub: string } | { ok: false; reason: string };

/** A service token's client id as Access writes it (`<hex>.access`); anything else names no one. */
const CLIENT_ID = /^[\x21-\x7e]{1,200}$/;

/** The identity a verified token's claims name, or null: a person by `sub`, a service token by its client id. */
function identityOf(claims: Record<string, unknown>): { sub: string; email: string | null } | null {
  if (typeof claims.sub === "string" && claims.sub !== "") return { sub: claims.sub, email: typeof claims.email === "string" ? claims.email : null };
  if (claims.sub === "" && typeof claims.common_name === "string" && CLIENT_ID.test(claims.common_name))
    return { sub: `service-token:${claims.common_name}`, email: null };
  return null;
}

/** `https://myteam.cloudflareaccess.com`: the issuer, and where the signing keys are. */
export function accessIssuer(teamDomain: string): string {
  const host = teamDomain.replace(/^https:\/\//, "").replace(/\/+$/, "");
  return `https://${host.includes(".") ? host : `${host}.cloudflareaccess.com`}`;
}

interface Jwk extends JsonWebKey {
  kid?: string;
}

const KEYS_TTL_MS = 10 * 60_000;
/** An unknown `kid` refetches the keys (Access rotates them), at most this often per isolate. */
const REFETCH_MIN_MS = 60_000;
const keyCache = new Map<string, { at: number; keys: Map<string, CryptoKey> }>();

async function fetchKeys(issuer: string): Promise<Map<string, CryptoKey>> {
  const res = await fetch(`${issuer}/cdn-cgi/access/certs`, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`fetching ${issuer}/cdn-cgi/access/certs answered ${res.status}`);
  const { keys } = (await res.json()) as { keys?: Jwk[] };
  const out = new Map<string, CryptoKey>();
  for (const jwk of (keys ?? []).slice(0, 20)) {
    if (jwk.kty !== "RSA" || !jwk.kid) continue;
    out.set(
      jwk.kid,
      await crypto.subtle.importKey("jwk", { kty: "RSA", n: jwk.n, e: jwk.e, alg: "RS256", ext: true }, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, [
        "verify",
      ]),
    );
  }
  return out;
}

async function keyFor(issuer: string, kid: string, now: number): Promise<CryptoKey | undefined> {
  let cached = keyCache.get(issuer);
  const stale = !cached || now - cached.at > KEYS_TTL_MS;
  const unknownKid = cached && !cached.keys.has(kid) && now - cached.at > REFETCH_MIN_MS;
  if (stale || unknownKid) {
    cached = { at: now, keys: await fetchKeys(issuer) };
    keyCache.set(issuer, cached);
  }
  return cached!.keys.get(kid);
}

const decodeJson = (part: string) => JSON.parse(new TextDecoder().decode(fromBase64Url(part))) as Record<string, unknown>;

/**
 * Verifies a `Cf-Access-Jwt-Assertion`: RS256 signature by one of the team's keys,
 * then issuer, audience, expiry and not-before. Never throws for a bad token; a key
 * fetch that fails is a refusal too (closed, never open).
 */
export async function verifyAccessJwt(jwt: string, config: AccessConfig, now = Date.now()): Promise<AccessCheck> {
  const parts = jwt.split(".");
  if (parts.length !== 3 || jwt.length > 8192) return { ok: false, reason: "not a JWT" };
  const [h, p, s] = parts as [string, string, string];
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = decodeJson(h);
    claims = decodeJson(p);
  } catch {
    return { ok: false, reason: "not a JWT" };
  }
  if (header.alg !== "RS256" || typeof header.kid !== "string") return { ok: false, reason: "not an RS256 token with a key id" };
  const issuer = accessIssuer(config.teamDomain);
  let key: CryptoKey | undefined;
  try {
    key = await keyFor(issuer, header.kid, now);
  } catch (err) {
    return { ok: false, reason: `the team's signing keys could not be fetched: ${(err as Error).message}` };
  }
  if (!key) return { ok: false, reason: "signed by a key the team does not have" };
  let signature: Uint8Array;
  try {
    signature = fromBase64Url(s);
  } catch {
    return { ok: false, reason: "not a JWT" };
  }
  if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature, new TextEncoder().encode(`${h}.${p}`)))) return { ok: false, reason: "bad signature" };
  if (claims.iss !== issuer) return { ok: false, reason: "issued by another team" };
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(config.aud)) return { ok: false, reason: "meant for another application (aud)" };
  const sec = now / 1000;
  if (typeof claims.exp !== "number" || sec >= claims.exp) return { ok: false, reason: "expired" };
  if (typeof claims.nbf === "number" && sec < claims.nbf) return { ok: false, reason: "not valid yet (nbf)" };
  const who = identityOf(claims);
  if (!who) return { ok: false, reason: "no subject (nor a service token's common_name)" };
  return { ok: true, ...who };
}
