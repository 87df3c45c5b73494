import { ATTRIBUTION } from "./reply-approval";

/** Where clients put the quoted original under a reply, besides `>` lines and the attribution. */
const ORIGINAL = /^(-{2,}\s*original message\s*-{2,}|_{10,})$/i;

const CUT = "\n[… the rest of the reply cut]";

/**
 * The new text of a reply to a mail: its lines above the quote (the first line that
 * starts with `>`, the "On … wrote:" attribution — also wrapped onto two lines — or
 * an "Original Message" separator), trimmed. Longer than `max` characters, it is cut
 * to `max`, marked as cut.
 */
export function replyText(text: string, max: number): string {
  const lines = text.split(/\r?\n/);
  let end = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const wrapped = /^on\s/i.test(line) && i + 1 < lines.length && ATTRIBUTION.test(`${line} ${lines[i + 1]!.trim()}`);
    if (line.startsWith(">") || ATTRIBUTION.test(line) || wrapped || ORIGINAL.test(line)) {
      end = i;
      break;
    }
  }
  const kept = lines.slice(0, end).join("\n").trim();
  if (kept.length <= max) return kept;
  return kept.slice(0, max - CUT.length) + CUT;
}
