import { readCookie } from "../cookies";
import type { Context, MiddlewareHandler } from "hono";
import { verifyAccessJwt } from "../../tokens/access-jwt";
import { csrfToken, verifySession, type Session } from "../../tokens/session-token";
import { Problem } from "../../views/layout";
import { sameSecret } from "../../security/constant-time";
import { appPath, basePath } from "../base-path";
import { hasApiToken } from "./api-token";

/**
 * Who looks at a page, and how they proved it. `csrf` is the token their forms must
 * carry (null: no form can be forged for them); `session` is the one a cookie carries.
 */
export interface Person {
  via: "api token" | "session" | "access";
  who: string;
  csrf: string | null;
  session?: Session;
}

export type PeopleEnv = { Bindings: Env; Variables: { person: Person } };

/** The key that signs sessions and CSRF tokens: SESSION_SECRET, else APPROVAL_SECRET. */
export const sessionSecret = (env: Env): string | undefined => env.SESSION_SECRET || env.APPROVAL_SECRET || undefined;

/** A cookie of the pages for people: its name (with its prefix), whether it is Secure, and its Path. */
export interface PageCookie {
  name: string;
  secure: boolean;
  path: string;
}

/**
 * Secure cookies everywhere but plain-http loopback (local `wrangler dev`), where a
 * browser would drop them. At the root the secure one has the `__Host-` prefix (no
 * Domain, Path=/); mounted under a basePath it is `__Secure-`, with Path=<basePath>, so
 * the rest of the site never receives it.
 */
export function pageCookie(url: string, name: string): PageCookie {
  const u = new URL(url);
  const loopback = u.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname);
  const path = basePath() || "/";
  if (loopback) return { name, secure: false, path };
  return { name: `${path === "/" ? "__Host-" : "__Secure-"}${name}`, secure: true, path };
}

export const sessionCookie = (url: string): PageCookie => pageCookie(url, "edgework_session");

/**
 * Does a form's `csrf` field match the person's token? A bearer of the API token
 * needs none (no other site can make a browser send that header).
 */
export async function csrfOk(person: Person, given: unknown): Promise<boolean> {
  if (person.via === "api token") return true;
  return typeof given === "string" && !!person.csrf && (await sameSecret(given, person.csrf));
}

/** The object that knows whether a session was signed out: one per session id (random, and read only from a signed cookie, so no one else picks it). */
const endedSession = (env: Env, sid: string) => env.ENDED_SESSIONS.getByName(sid) as unknown as EndedSessionRpc;

/** What the app asks of a session's object (durable-objects/ended-session.ts implements it). */
export interface EndedSessionRpc {
  /** Ends the session; `exp` (ms) is its token's expiry. */
  end(exp: number): Promise<void>;
  /** Whether the session was signed out (and its token has not expired yet). */
  ended(): Promise<boolean>;
}

/** Signs a session out on the server: its cookie opens nothing from now until it expires. */
export const endSession = (env: Env, session: Session) => endedSession(env, session.sid).end(session.exp);

/** The person a request proves: the API token, a signed session cookie that was not signed out, or (when configured) a Cloudflare Access JWT. */
export async function personOf(c: Context<PeopleEnv>): Promise<Person | null> {
  const env = c.env;
  if (await hasApiToken(env, c.req.header("Authorization"))) return { via: "api token", who: "API token", csrf: null };
  const secret = sessionSecret(env);
  const cookie = readCookie(c.req.header("cookie"), sessionCookie(c.req.url).name);
  if (cookie && secret && env.API_TOKEN) {
    const session = await verifySession(cookie, secret, env.API_TOKEN);
    // One RPC per page request with a valid cookie; none for a forged or expired one.
    if (session && !(await endedSession(env, session.sid).ended())) {
      return { via: "session", who: "API token (signed in)", csrf: await csrfToken(`session:${session.sid}`, secret, env.API_TOKEN), session };
    }
  }
  const access = await accessIdentity(env, c.req.header("Cf-Access-Jwt-Assertion"));
  if (access) {
    const csrf = secret ? await csrfToken(`access:${access.sub}`, secret, env.API_TOKEN ?? "") : null;
    return { via: "access", who: access.email ?? access.sub, csrf };
  }
  return null;
}

/** Whom a request's `Cf-Access-Jwt-Assertion` names once verified (when Access is configured), else null. */
export async function accessIdentity(env: Env, assertion: string | undefined): Promise<{ sub: string; email: string | null } | null> {
  const { ACCESS_TEAM_DOMAIN: teamDomain, ACCESS_AUD: aud } = env;
  if (!assertion || !teamDomain || !aud) return null;
  const check = await verifyAccessJwt(assertion, { teamDomain, aud });
  return check.ok ? { sub: check.sub, email: check.email } : null;
}

/**
 * Pages for people: the API token, a session or Access, else a browser is sent to
 * the login form (303) and anything else gets 401. Sets `person`.
 */
export function peopleAuth(): MiddlewareHandler<PeopleEnv> {
  return async function peopleAuth(c, next) {
    const person = await personOf(c);
    if (!person) {
      const url = new URL(c.req.url);
      if (c.req.method === "GET" && (c.req.header("Accept") ?? "").includes("text/html")) {
        return c.redirect(appPath(`/login?next=${encodeURIComponent(url.pathname + url.search)}`), 303);
      }
      return c.html(
        Problem({
          title: "Sign in first",
          message: `Sign in at ${appPath("/login")} with the API token, send Authorization: Bearer <API_TOKEN>, or come through Cloudflare Access.`,
        }),
        401,
      );
    }
    c.set("person", person);
    await next();
  };
}
