/**
 * The idempotency key of one tool call: SHA-256 of run id and call path, so a call
 * repeated after a crash sends the same key and a receiver that honours
 * `Idempotency-Key` drops the repeat. Synchronous (ToolContext is built without
 * awaiting), hence SHA-256 written out here instead of `crypto.subtle`.
 */
export function idempotencyKey(runId: string, callPath: string): string {
  return `ew_${sha256Hex(`${runId}\n${callPath}`).slice(0, 40)}`;
}

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const W = new Int32Array(64);
const encoder = new TextEncoder();
const BYTE_HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
// Byte by byte: `toString(16)` of a number past 2^31 takes V8's slow double path.
const hex = (x: number) => BYTE_HEX[x >>> 24]! + BYTE_HEX[(x >>> 16) & 255]! + BYTE_HEX[(x >>> 8) & 255]! + BYTE_HEX[x & 255]!;

/** The bytes of an ASCII string (its UTF-8 too), without the encoder's call into the runtime; else undefined. */
function ascii(text: string): Uint8Array | undefined {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return undefined;
    bytes[i] = c;
  }
  return bytes;
}

/**
 * FIPS 180-4 SHA-256 of the UTF-8 bytes of `text`, as hex. Plain locals in the
 * rounds (no arrays built per round): this runs for every tool call.
 */
export function sha256Hex(text: string): string {
  const data = ascii(text) ?? encoder.encode(text);
  const blocks = Math.ceil((data.length + 9) / 64);
  const msg = new Uint8Array(blocks * 64);
  msg.set(data);
  msg[data.length] = 0x80;
  const view = new DataView(msg.buffer);
  view.setUint32(msg.length - 8, Math.floor(data.length / 0x20000000));
  view.setUint32(msg.length - 4, (data.length << 3) >>> 0);
  let h0 = 0x6a09e667,
    h1 = 0xbb67ae85 | 0,
    h2 = 0x3c6ef372,
    h3 = 0xa54ff53a | 0,
    h4 = 0x510e527f,
    h5 = 0x9b05688c | 0,
    h6 = 0x1f83d9ab,
    h7 = 0x5be0cd19; // prettier-ignore
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < 16; i++) W[i] = view.getInt32(b * 64 + i * 4);
    for (let i = 16; i < 64; i++) {
      const w15 = W[i - 15]!;
      const w2 = W[i - 2]!;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
    }
    let a = h0,
      b2 = h1,
      c = h2,
      d = h3,
      e = h4,
      f = h5,
      g = h6,
      h = h7; // prettier-ignore
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b2) ^ (a & c) ^ (b2 & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b2;
      b2 = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b2) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return hex(h0) + hex(h1) + hex(h2) + hex(h3) + hex(h4) + hex(h5) + hex(h6) + hex(h7);
}
