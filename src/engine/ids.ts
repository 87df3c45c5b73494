/** Lowercase hex of bytes. */
export const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** SHA-256 (WebCrypto) of bytes, or of a string as UTF-8, in hex. */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", typeof data === "string" ? new TextEncoder().encode(data) : data)));
}

/** Short, stable ids derived from journal keys (so a replay finds the same approval). */
export async function approvalId(key: string): Promise<string> {
  return `ap_${(await sha256Hex(key)).slice(0, 24)}`;
}

/** FNV-1a, for instance keys: cheap, deterministic, not for security. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

/** JSON with sorted object keys, so equal values give equal strings. */
export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}
