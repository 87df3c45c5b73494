/** `local@domain`: no spaces, one `@`, no glob characters. */
export const ADDRESS = /^[^\s@*?<>]{1,64}@[^\s@*?<>]{1,255}$/;
/** An `allow_from` entry: an exact address, or `*@domain` for anyone at that domain. */
export const ALLOW_FROM = /^(?:[^\s@*?<>]{1,64}|\*)@[^\s@*?<>]{1,255}$/;

/**
 * Is `address` allowed by the list? Exact entries compare whole addresses,
 * `*@domain` compares the part after the last `@` — plain string equality,
 * linear in the input, case-insensitive (domains are; local parts are in practice).
 */
export function addressAllowed(allow: readonly string[], address: string): boolean {
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf("@");
  const domain = a.slice(at + 1);
  if (at < 1 || !domain) return false;
  return allow.some((entry) => {
    const e = entry.toLowerCase();
    return e.startsWith("*@") ? e.slice(2) === domain : e === a;
  });
}
