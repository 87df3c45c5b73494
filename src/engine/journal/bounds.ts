/**
 * How big one journal step may be: its key plus its value as the store writes it
 * (JSON text, UTF-8). Cloudflare's SQLite refuses a string or row over 2 MB; 1.5 MB
 * leaves room for the row's other columns and for "MB" meaning 10^6 rather than 2^20.
 */
export const MAX_STEP_BYTES = 1_500_000;

/**
 * UTF-8 bytes of `text` as TextEncoder writes it (a lone surrogate becomes U+FFFD,
 * 3 bytes), counted without encoding: this runs for every journal step.
 */
export function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: two units, four bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * Levels of arrays and objects a run's output may nest: SQLite's JSON functions stop at
 * 1000, and the run's status is read through them from the event holding its output.
 */
export const MAX_OUTPUT_DEPTH = 256;

/**
 * Levels a model's tool-call arguments may nest: they are stored with an approval and,
 * approved with "remember", inside its decision, which SQLite's JSON functions read.
 */
export const MAX_ARGS_DEPTH = 64;

/** Whether `value` nests arrays or objects deeper than `max` (walked without recursion: a hostile value may be thousands deep). */
export function nestedDeeper(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** A step's size as the store writes it: the key, and the value's JSON text, in UTF-8 bytes. */
export const stepBytes = (key: string, value: unknown): number => utf8Bytes(key) + utf8Bytes(JSON.stringify(value ?? null));

/**
 * Whether a step, its value already JSON text, is within `MAX_STEP_BYTES`. Bytes are
 * counted only when the text is long enough to be over: a UTF-16 unit is at most 3 bytes.
 */
export const fitsStep = (key: string, json: string): boolean =>
  (key.length + json.length) * 3 <= MAX_STEP_BYTES || utf8Bytes(key) + utf8Bytes(json) <= MAX_STEP_BYTES;

/**
 * The longest prefix of `text` whose form inside a JSON string (escapes included)
 * takes at most `maxBytes` of UTF-8. Never splits a surrogate pair.
 */
export function cutToJsonBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    bytes += jsonBytes(ch.codePointAt(0)!);
    if (bytes > maxBytes) break;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** UTF-8 bytes of one code point as JSON.stringify writes it inside a string. */
function jsonBytes(c: number): number {
  if (c === 0x22 || c === 0x5c) return 2; // \" \\
  if (c < 0x20) return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6; // \n … or \u00XX
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return 6; // a lone surrogate is written as \uXXXX
  return c < 0x10000 ? 3 : 4;
}
