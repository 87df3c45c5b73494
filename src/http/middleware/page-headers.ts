import type { MiddlewareHandler } from "hono";
import { PAGE_STYLE } from "../../views/layout";

let styleSource: Promise<string> | undefined;
/** The CSP source admitting the pages' inline stylesheet and nothing else (computed once per isolate). */
const styleHash = () =>
  (styleSource ??= crypto.subtle
    .digest("SHA-256", new TextEncoder().encode(PAGE_STYLE))
    .then((d) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(d)))}'`));

/**
 * Headers for pages that carry a capability token (an approval link, the run
 * page): no script and nothing loaded from elsewhere, forms post only here, no
 * framing (clickjacking), the URL never leaves in a Referer, nothing cached.
 * Set on every answer of the route, problem pages and errors included.
 */
export function pageHeaders(): MiddlewareHandler {
  return async function pageHeaders(c, next) {
    await next();
    const csp = ["default-src 'none'", `style-src ${await styleHash()}`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"];
    c.res.headers.set("Content-Security-Policy", csp.join("; "));
    c.res.headers.set("Referrer-Policy", "no-referrer");
    c.res.headers.set("X-Content-Type-Options", "nosniff");
    c.res.headers.set("Cache-Control", "no-store");
  };
}
