/** RFC 4648 base32 in lowercase, unpadded: survives mail systems that change the case of local parts. */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export function toBase32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Case-insensitive; null for anything that is not base32 of exactly `length` bytes. */
export function fromBase32(text: string, length: number): Uint8Array | null {
  const s = text.toLowerCase();
  if (s.length !== Math.ceil((length * 8) / 5)) return null;
  const out = new Uint8Array(length);
  let bits = 0;
  let value = 0;
  let i = 0;
  for (const c of s) {
    const v = ALPHABET.indexOf(c);
    if (v < 0) return null;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      if (i < length) out[i++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  // The padding bits of the last character must be zero: one spelling per reference.
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
