const encoder = new TextEncoder();

/** HMAC-SHA256 of `data` under `secret` (its UTF-8 bytes), as bytes. */
export async function hmacSha256(secret: string, data: Uint8Array | string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, typeof data === "string" ? encoder.encode(data) : data));
}
