import type { MiddlewareHandler } from "hono";
import { sameSecret } from "../../security/constant-time";
import { httpError } from "../http-error";

/** Does an Authorization header carry the API token? (Constant-time; false when none is set.) */
export async function hasApiToken(env: Env, authorization: string | undefined): Promise<boolean> {
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1];
  return !!given && !!env.API_TOKEN && (await sameSecret(given, env.API_TOKEN));
}

/** `Authorization: Bearer <API_TOKEN>`. Without the secret configured, closed (503), never open. */
export function apiToken(): MiddlewareHandler<{ Bindings: Env }> {
  return async function apiToken(c, next) {
    if (!c.env.API_TOKEN) {
      throw httpError(503, {
        error: "API_TOKEN is not set: add it with `wrangler secret put API_TOKEN` (or to .dev.vars locally); the API stays closed until then",
      });
    }
    if (!(await hasApiToken(c.env, c.req.header("Authorization")))) {
      throw httpError(401, { error: "missing or wrong API token: send Authorization: Bearer <API_TOKEN>" }, { "WWW-Authenticate": "Bearer" });
    }
    await next();
  };
}
