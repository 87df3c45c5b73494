import type { Context } from "hono";

/** What our cookies hold: tokens and nonces we made (base64url, hex, dots). Anything else is a bug, not data. */
const COOKIE_VALUE = /^[A-Za-z0-9._~-]*$/;

/** The value of cookie `name` in a request's Cookie header (the first of that name), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.length > 1 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}

/**
 * Sets a page cookie (`maxAge` 0 deletes it): HttpOnly, SameSite=Strict, its path, Secure where
 * `pageCookie` says (its `__Host-`/`__Secure-` name then holds the browser to the same rules).
 */
export function setPageCookie(c: Context, cookie: { name: string; secure: boolean; path: string }, value: string, maxAge: number): void {
  if (!COOKIE_VALUE.test(value)) throw new Error(`cookie ${cookie.name}: a value of ours holds a character a cookie may not`);
  const secure = cookie.secure ? "; Secure" : "";
  c.header("Set-Cookie", `${cookie.name}=${value}; Max-Age=${maxAge}; Path=${cookie.path}; HttpOnly${secure}; SameSite=Strict`, { append: true });
}
