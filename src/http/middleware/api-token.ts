import type { MiddlewareHandler } from "hono";
import { sameSecret } from "../../security/constant-time";
import { httpError } from "../http-error";

/** `Authorization: Bearer <API_TOKEN>`. Without the secret configured, closed (503), never open. */
export function apiToken(): MiddlewareHandler<{ Bindings: Env }> {
  return async function apiToken(c, next) {
    const expected = c.env.API_TOKEN;
    if (!expected) {
      throw httpError(503, { error: "API_TOKEN is not set: add it with `wrangler secret put API_TOKEN` (or to .dev.vars locally); the API stays closed until then" });
    }
    const given = /^Bearer\s+(.+)$/i.exec(c.req.header("Authorization") ?? "")?.[1];
    if (!given || !(await sameSecret(given, expected))) {
      throw httpError(401, { error: "missing or wrong API token: send Authorization: Bearer <API_TOKEN>" }, { "WWW-Authenticate": "Bearer" });
    }
    await next();
  };
}
