import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/**
 * The relative links of a Markdown file that lead nowhere: a file or folder that does
 * not exist, or a `#anchor` that is no heading of its target (GitHub's slugs). Links
 * with a scheme (https:, mailto:) are not followed; code blocks and code spans are
 * not links. Used by tests/node/doc-links.test.ts over README.md and docs/.
 */

/** One link that leads nowhere: where it is written, what it says, why it fails. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

const FENCE = /^\s*(```|~~~)/;
const INLINE_LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const REFERENCE_DEF = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Each line outside fenced code blocks, with its number; code spans blanked unless `keepCode` (headings keep their words). */
function proseLines(text: string, keepCode = false): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  text.split("\n").forEach((raw, i) => {
    if (FENCE.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: i + 1, text: keepCode ? raw : raw.replace(/`[^`]*`/g, "``") });
  });
  return out;
}

/** Every link target written in the file, with its line. */
export function linkTargets(markdown: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const m of text.matchAll(INLINE_LINK)) out.push({ line, target: m[1]! });
    const def = REFERENCE_DEF.exec(text);
    if (def) out.push({ line, target: def[1]! });
  }
  return out;
}

/** GitHub's anchor for a heading's text: lowercase, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"); // a link counts by its text
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown file's headings; a repeated one gets -1, -2… as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of proseLines(markdown, true)) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** The broken relative links of `file` (an absolute path), reported relative to `root`. */
export function brokenLinks(file: string, root: string, read: (path: string) => string = (p) => readFileSync(p, "utf8")): BrokenLink[] {
  const markdown = read(file);
  const broken: BrokenLink[] = [];
  const at = relative(root, file);
  for (const { line, target } of linkTargets(markdown)) {
    if (SCHEME.test(target) || target.startsWith("//")) continue;
    const [pathPart, anchor] = splitOnce(decodeURI(target), "#");
    const path = pathPart ? resolve(dirname(file), pathPart) : file;
    if (!existsSync(path)) {
      broken.push({ file: at, line, target, reason: `${relative(root, path)} does not exist` });
      continue;
    }
    if (anchor === undefined || !path.endsWith(".md") || statSync(path).isDirectory()) continue;
    if (!anchors(read(path)).has(anchor)) broken.push({ file: at, line, target, reason: `no heading "#${anchor}" in ${relative(root, path)}` });
  }
  return broken;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}
