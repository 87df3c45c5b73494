/**
 * Raw MIME for the mail edgework sends, written here rather than by a library:
 * mimetext (what this used) imports Babel's core-js runtime in every build,
 * ~10 KiB gzip and ~6 ms of every cold start for `trim` and `defineProperty`,
 * which workerd has natively.
 */

const CRLF = "\r\n";
/** UTF-8 bytes per encoded word: 45 bytes are 60 base64 characters, so a word stays within RFC 2047's 75. */
const WORD_BYTES = 45;

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Base64 in 76-character lines: keeps any UTF-8 text (arrows, names) valid in a 7-bit transport. */
function base64Lines(text: string): string {
  return base64(new TextEncoder().encode(text)).replace(/.{76}/g, `$&${CRLF}`);
}

/**
 * Header text (a subject, a display name) as RFC 2047 encoded words, folded: any
 * UTF-8 in any length, and no CR or LF reaches the header. Words split between
 * characters, never inside one.
 */
function encodedWords(text: string): string {
  const enc = new TextEncoder();
  const words: string[] = [];
  let word = "";
  for (const ch of text) {
    if (word && enc.encode(word + ch).length > WORD_BYTES) {
      words.push(word);
      word = "";
    }
    word += ch;
  }
  words.push(word);
  return words.map((w) => `=?utf-8?B?${base64(enc.encode(w))}?=`).join(`${CRLF} `);
}

/** An address as a header carries it; one that could end the header or hold a second address is refused. */
function address(addr: string, field: string): string {
  if (!/^[^\s<>(),;:"\\@]+@[^\s<>(),;:"\\@]+$/.test(addr)) throw new Error(`${field}: not a plain address (${JSON.stringify(addr.slice(0, 100))})`);
  return `<${addr}>`;
}

const randomHex = () => crypto.randomUUID().replaceAll("-", "");

/**
 * A multipart/alternative message (text and HTML), as raw MIME. The subject and the
 * From name are encoded (no text can add a header through them) and addresses are
 * checked; `headers` are written as given, so their values must be checked by the
 * caller (answer-mail.ts checks its Message-IDs; a value with CR or LF is refused).
 * `fromName`: the From display name ("edgework" unless given; empty: none). Without a
 * `Message-ID` in `headers`, one is made on the From address's domain.
 */
export function buildMime(m: {
  from: string;
  fromName?: string;
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}): string {
  const name = m.fromName ?? "edgework";
  const own = Object.entries(m.headers ?? {});
  for (const [key, value] of own) {
    if (!/^[\x21-\x39\x3b-\x7e]+$/.test(key) || /[\r\n]/.test(value.replaceAll(`${CRLF} `, "")))
      throw new Error(`header ${JSON.stringify(key)}: not a single header line`);
  }
  const hasId = own.some(([key]) => key.toLowerCase() === "message-id");
  const boundary = randomHex();
  const lines = [
    `Date: ${new Date().toUTCString().replace("GMT", "+0000")}`,
    `From: ${name ? `${encodedWords(name)} ` : ""}${address(m.from, "From")}`,
    ...(m.replyTo ? [`Reply-To: ${address(m.replyTo, "Reply-To")}`] : []),
    `To: ${address(m.to, "To")}`,
    ...(hasId ? [] : [`Message-ID: <${randomHex()}@${m.from.split("@")[1]}>`]),
    `Subject: ${encodedWords(m.subject)}`,
    "MIME-Version: 1.0",
    ...own.map(([key, value]) => `${key}: ${value}`),
    `Content-Type: multipart/alternative; boundary=${boundary}`,
    "",
  ];
  const part = (type: string, body: string) =>
    [`--${boundary}`, `Content-Type: ${type}; charset=UTF-8`, "Content-Transfer-Encoding: base64", "", base64Lines(body), ""].join(CRLF);
  return [...lines, part("text/plain", m.text), part("text/html", m.html), `--${boundary}--`, ""].join(CRLF);
}
