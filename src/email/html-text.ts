/**
 * Readable text from an email's HTML body, for messages that carry no text part.
 * The HTML is hostile: one forward scan with indexOf (no regex over the markup, so
 * nothing can backtrack), script/style content dropped, entities decoded, and
 * the work stops once `maxChars` of text are out.
 */

/** Elements whose content is never text a reader sees. */
const HIDDEN = new Set(["script", "style", "title", "template", "noscript", "svg", "math", "object", "iframe"]);
/** Elements that start a new line. */
const BLOCK = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "td",
  "th",
  "tr",
  "ul",
]);

/** The named entities mail clients write; any other name is left as written. */
const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  shy: "",
  copy: "©",
  reg: "®",
  trade: "™",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  deg: "°",
  middot: "·",
  bull: "•",
  hellip: "…",
  ndash: "–",
  mdash: "—",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  times: "×",
  divide: "÷",
  zwnj: "",
  zwj: "",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
};

/** Bounded quantifiers, no nesting: linear. */
const ENTITY = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z][a-zA-Z0-9]{1,31}));/g;

function codePoint(n: number): string {
  return n === 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) ? "\ufffd" : String.fromCodePoint(n);
}

export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(ENTITY, (whole, dec?: string, hex?: string, name?: string) => {
    if (dec !== undefined) return codePoint(Number(dec));
    if (hex !== undefined) return codePoint(parseInt(hex, 16));
    return NAMED[name!.toLowerCase()] ?? whole;
  });
}

const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isNameChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45;

/** Index just past the `>` that ends the tag opened at `from`, skipping quoted attribute values; `html.length` if unterminated. */
function tagEnd(html: string, from: number): number {
  let quote = "";
  for (let i = from; i < html.length; i++) {
    const c = html[i]!;
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return i + 1;
  }
  return html.length;
}

/** Index of the `</name` that closes a hidden element (any case), or -1. Each `</` is looked at once. */
function closingTag(html: string, name: string, from: number): number {
  for (let at = html.indexOf("</", from); at >= 0; at = html.indexOf("</", at + 2)) {
    const after = at + 2 + name.length;
    if (html.slice(at + 2, after).toLowerCase() === name && !isNameChar(html.charCodeAt(after))) return at;
  }
  return -1;
}

/** Text runs are read in pieces this long, so a megabyte without a tag stops at the cap too. */
const TEXT_PIECE = 16 * 1024;
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);

/**
 * The text between two tags, whitespace collapsed and entities decoded, while `more()`;
 * returns how far it read. Pieces end before whitespace: no entity is split.
 */
function emitText(html: string, from: number, to: number, more: () => boolean, emit: (s: string) => void): number {
  let at = from;
  while (at < to && more()) {
    let end = Math.min(to, at + TEXT_PIECE);
    if (end < to) {
      let back = end;
      while (back > at && !isSpace(html.charCodeAt(back))) back--;
      if (back > at) end = back;
    }
    emit(decodeEntities(html.slice(at, end).replace(/\s+/g, " ")));
    at = end;
  }
  return at;
}

/**
 * Text from HTML: whitespace collapsed as a browser would, block elements on their
 * own lines, at most `maxChars`; `complete` is false when there was more.
 */
export function htmlToText(html: string, maxChars: number): { text: string; complete: boolean } {
  const out: string[] = [];
  let length = 0;
  let last = "\n";
  let newlines = 2;
  // No space after a space or line break, no line break at the start or after a blank
  // line: what is counted is about what is kept. Past the cap by at most one character.
  const emit = (s: string) => {
    if (s === "\n" ? newlines >= 2 : (last === " " || last === "\n") && s.startsWith(" ")) s = s.slice(1);
    const part = s.slice(0, maxChars + 1 - length);
    if (!part) return;
    out.push(part);
    length += part.length;
    last = part.at(-1)!;
    newlines = part === "\n" ? newlines + 1 : last === "\n" ? 1 : 0;
  };
  let i = 0;
  while (i < html.length && length <= maxChars) {
    const lt = html.indexOf("<", i);
    const textEnd = lt < 0 ? html.length : lt;
    i = emitText(html, i, textEnd, () => length <= maxChars, emit);
    if (i < textEnd || lt < 0) break;
    if (html.startsWith("<!--", i)) {
      const end = html.indexOf("-->", i + 4);
      i = end < 0 ? html.length : end + 3;
      continue;
    }
    const closing = html[i + 1] === "/";
    let nameEnd = i + (closing ? 2 : 1);
    while (nameEnd < html.length && isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
    const name = html.slice(i + (closing ? 2 : 1), nameEnd).toLowerCase();
    if (!closing && !isLetter(html.charCodeAt(i + 1)) && html[i + 1] !== "!" && html[i + 1] !== "?") {
      emit("<"); // "a < b", "<3": not a tag
      i++;
      continue;
    }
    i = tagEnd(html, nameEnd);
    const selfClosing = html[i - 2] === "/";
    if (!closing && !selfClosing && HIDDEN.has(name)) {
      // Unclosed, it hides the rest (as in a browser).
      const close = closingTag(html, name, i);
      i = close < 0 ? html.length : tagEnd(html, close + 2);
    } else if (BLOCK.has(name)) emit("\n");
  }
  const text = tidy(out.join(""));
  return { text: text.slice(0, maxChars), complete: i >= html.length && text.length <= maxChars };
}

/** Spaces around line breaks trimmed, at most one blank line in a row. */
function tidy(text: string): string {
  // Pieces of one text run may meet space to space.
  const lines = text.split("\n").map((l) => l.trim().replace(/ {2,}/g, " "));
  const kept: string[] = [];
  for (const line of lines) if (line || (kept.length && kept.at(-1) !== "")) kept.push(line);
  while (kept.at(-1) === "") kept.pop();
  return kept.join("\n");
}
