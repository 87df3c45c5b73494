import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { readCookie, setPageCookie } from "../cookies";
import { numberVar } from "../../config";
import { sameSecret } from "../../security/constant-time";
import { csrfToken, randomId, signSession } from "../../tokens/session-token";
import { Problem } from "../../views/layout";
import { LoginPage } from "../../views/login-page";
import { appPath, basePath } from "../base-path";
import { csrfOk, endSession, pageCookie, personOf, sessionCookie, sessionSecret, type PeopleEnv } from "../middleware/people-auth";

/** `GET/POST /login`, `POST /logout`: a session cookie for whoever knows the API token. */
export const login = new Hono<PeopleEnv>();

const LOGIN_TTL_S = 15 * 60;

/** A path on this site, never `//evil.example` or `https://…`. */
// No control characters, spaces or backslashes anywhere: browsers drop a tab in `/\t/evil.example` and read `//evil.example`.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this pattern refuses.
const SAME_SITE_PATH = /^\/(?![/\\])[^\x00-\x20\x7f\\]*$/;
const ORIGIN = "https://app.invalid";

/**
 * Where to go once signed in: a path of this app (under its basePath, as the browser
 * resolves it: `/agents/../inbox` is the host site's `/inbox`), else the app's inbox.
 */
function safeNext(next: unknown): string {
  if (typeof next !== "string" || next.length > 2048 || !SAME_SITE_PATH.test(next)) return appPath("/inbox");
  const url = new URL(next, ORIGIN);
  const base = basePath();
  if (url.origin !== ORIGIN || (base && url.pathname !== base && !url.pathname.startsWith(`${base}/`))) return appPath("/inbox");
  return `${url.pathname}${url.search}${url.hash}`;
}

/** Before login the form's CSRF token binds to a random nonce in its own cookie (login CSRF). */
const loginCookie = (url: string) => pageCookie(url, "edgework_login");

function configured(c: Context<PeopleEnv>): { secret: string; apiToken: string } | null {
  const secret = sessionSecret(c.env);
  return secret && c.env.API_TOKEN ? { secret, apiToken: c.env.API_TOKEN } : null;
}

const off = (c: Context<PeopleEnv>) =>
  c.html(<Problem title="Sign-in is off" message="Set API_TOKEN and SESSION_SECRET (or APPROVAL_SECRET) with `wrangler secret put` to sign in here." />, 503);

async function loginForm(c: Context<PeopleEnv>, keys: { secret: string; apiToken: string }, next: string, error?: string, status: 200 | 401 | 403 = 200) {
  const nonce = randomId();
  const cookie = loginCookie(c.req.url);
  setPageCookie(c, cookie, nonce, LOGIN_TTL_S);
  return c.html(<LoginPage csrf={await csrfToken(`login:${nonce}`, keys.secret, keys.apiToken)} next={next} error={error} />, status);
}

login.get("/login", async (c) => {
  const keys = configured(c);
  return keys ? loginForm(c, keys, safeNext(c.req.query("next"))) : off(c);
});

login.post("/login", async (c) => {
  const keys = configured(c);
  if (!keys) return off(c);
  const form = await c.req.parseBody();
  const next = safeNext(form.next);
  const nonce = readCookie(c.req.header("cookie"), loginCookie(c.req.url).name);
  const expected = nonce ? await csrfToken(`login:${nonce}`, keys.secret, keys.apiToken) : null;
  if (!expected || typeof form.csrf !== "string" || !(await sameSecret(form.csrf, expected))) {
    return loginForm(c, keys, next, "The form expired or did not come from this site; sign in again.", 403);
  }
  if (typeof form.token !== "string" || !(await sameSecret(form.token, keys.apiToken))) return loginForm(c, keys, next, "That is not the API token.", 401);
  const ttl = numberVar(c.env, "SESSION_TTL_SECONDS", 12 * 3600);
  const signed = await signSession({ sid: randomId(), exp: Date.now() + ttl * 1000 }, keys.secret, keys.apiToken);
  const [nonceCookie, session] = [loginCookie(c.req.url), sessionCookie(c.req.url)];
  setPageCookie(c, nonceCookie, "", 0);
  setPageCookie(c, session, signed, ttl);
  return c.redirect(next, 303);
});

login.post("/logout", async (c) => {
  const person = await personOf(c);
  const form = await c.req.parseBody();
  if (!person || !(await csrfOk(person, form.csrf))) return c.html(<Problem title="Not signed out" message="The form did not come from this site." />, 403);
  // Deleting the cookie is not enough: a copy of it must open nothing either.
  if (person.session) await endSession(c.env, person.session);
  const cookie = sessionCookie(c.req.url);
  setPageCookie(c, cookie, "", 0);
  return c.redirect(appPath("/login"), 303);
});
