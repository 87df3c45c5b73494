import { toBase64Url } from "../../src/tokens/base64url";

/** A fresh RS256 key pair as a Cloudflare Access team would have: its public JWK (kid k1) and a signer of JWTs with it. */
export async function accessKeys() {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const jwk = { ...((await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey), kid: "k1" };
  const enc = (o: unknown) => toBase64Url(new TextEncoder().encode(JSON.stringify(o)));
  const sign = async (claims: Record<string, unknown>, key = pair.privateKey) => {
    const head = `${enc({ alg: "RS256", kid: "k1", typ: "JWT" })}.${enc(claims)}`;
    return `${head}.${toBase64Url(new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(head))))}`;
  };
  return { jwk, sign };
}
