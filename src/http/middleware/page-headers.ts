import type { MiddlewareHandler } from "hono";
import { PAGE_STYLE } from "../../views/layout";

const hashes = new Map<string, Promise<string>>();
/** The CSP source admitting exactly this inline text (computed once per isolate). */
const hashSource = (text: string) => {
  let h = hashes.get(text);
  if (!h)
    hashes.set(
      text,
      (h = crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then((d) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(d)))}'`)),
    );
  return h;
};

/**
 * Headers for pages that carry a capability token (an approval link, the run
 * page): no script and nothing loaded from elsewhere, forms post only here, no
 * framing (clickjacking), the URL never leaves in a Referer, nothing cached.
 * Set on every answer of the route, problem pages and errors included.
 * `script`: the one inline script this route's page carries (the live run page):
 * admitted by its hash, with `connect-src 'self'` for its event stream; no other
 * script runs, and routes without it allow none.
 */
export function pageHeaders(opts: { script?: string } = {}): MiddlewareHandler {
  return async function pageHeaders(c, next) {
    await next();
    const csp = ["default-src 'none'", `style-src ${await hashSource(PAGE_STYLE)}`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"];
    // Problem pages (any other status) carry no script: none is admitted there.
    if (opts.script && c.res.status === 200) csp.push(`script-src ${await hashSource(opts.script)}`, "connect-src 'self'");
    c.res.headers.set("Content-Security-Policy", csp.join("; "));
    c.res.headers.set("Referrer-Policy", "no-referrer");
    c.res.headers.set("X-Content-Type-Options", "nosniff");
    c.res.headers.set("Cache-Control", "no-store");
  };
}
