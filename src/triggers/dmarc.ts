/** What is read of one Authentication-Results header: a verdict needs no more. */
const MAX_HEADER_CHARS = 4096;

/**
 * Whether the receiving MTA's DMARC verdict on a message is `pass`: read from the
 * topmost `Authentication-Results` header only (RFC 8601). Each MTA adds its header
 * above the ones it received, so any header below the topmost one may have been
 * written by the sender; a forged `dmarc=pass` there counts for nothing. `headers`
 * in message order, top first (postal-mime's `headers`, keys lower-case).
 */
export function dmarcPassed(headers: readonly { key: string; value: string }[]): boolean {
  const top = headers.find((h) => h.key === "authentication-results");
  if (!top) return false;
  // `authserv-id [version]; method=result [reason] [props]; ...`: the first part names the MTA.
  const results = resultParts(top.value.slice(0, MAX_HEADER_CHARS)).slice(1);
  const dmarc = results.map((r) => /^\s*dmarc\s*=\s*([a-z]+)/i.exec(r)).find((m) => m !== null);
  return dmarc?.[1]?.toLowerCase() === "pass";
}

/**
 * The header's `;`-separated parts, with comments (nested, RFC 5322) dropped and quoted
 * strings (a reason, an envelope sender's local part) blanked: either may hold any text,
 * a `;` or a "dmarc=pass" included, that is no result.
 */
function resultParts(value: string): string[] {
  const parts: string[] = [];
  let part = "";
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === "\\" && (quoted || depth > 0)) i++;
    else if (quoted) {
      if (c === '"') quoted = false;
    } else if (c === "(") depth++;
    else if (c === ")" && depth > 0) depth--;
    else if (depth > 0) continue;
    else if (c === '"') {
      quoted = true;
      part += '""';
    } else if (c === ";") {
      parts.push(part);
      part = "";
    } else part += c;
  }
  parts.push(part);
  return parts;
}
