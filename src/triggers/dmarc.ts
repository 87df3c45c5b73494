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
  // Comments (RFC 5322, not nested here) may hold any text, "dmarc=pass" included: dropped.
  const value = top.value.slice(0, MAX_HEADER_CHARS).replace(/\([^()]*\)/g, " ");
  // `authserv-id [version]; method=result [reason] [props]; ...`: the first part names the MTA.
  const results = value.split(";").slice(1);
  const dmarc = results.map((r) => /^\s*dmarc\s*=\s*([a-z]+)/i.exec(r)).find((m) => m !== null);
  return dmarc?.[1]?.toLowerCase() === "pass";
}
