/**
 * One attempt at posting a completion webhook: the URL checked again (the vars may have
 * changed since the run started), signed (signature.ts), sent through the invocation's
 * line of connections, never following a redirect, within NOTIFY_TIMEOUT_MS; the
 * response's body is not read. A 2xx is delivered; a timeout, a network failure, 408,
 * 429 or 5xx is tried again later; anything else (a redirect, another 4xx, a URL or
 * secret refused) is given up at once: it would fail the same way again.
 */

import type { Connections } from "../engine/net/connection-slots";
import { whenConnected } from "../engine/net/connection-slots";
import { guardedFetch } from "../engine/net/guarded-fetch";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from "./signature";
import { notifyUrlProblem, shownOrigin } from "./notify-url";

export const DEFAULT_NOTIFY_TIMEOUT_MS = 10_000;
/** An error's text as the run records it: bounded, the URL shown as its origin. */
const MAX_ERROR_CHARS = 300;

export type Attempt = { ok: true; status: number } | { ok: false; retry: boolean; status?: number; error: string };

export interface NotifyVars {
  NOTIFY_SECRET?: string;
  NOTIFY_ALLOW_HOSTS?: string;
}

export async function postNotification(
  vars: NotifyVars,
  url: string,
  body: { id: string; json: string },
  opts: { connections: Connections; timeoutMs: number; now: number },
): Promise<Attempt> {
  const refused = notifyUrlProblem(url, vars.NOTIFY_ALLOW_HOSTS);
  if (refused) return { ok: false, retry: false, error: refused };
  if (!vars.NOTIFY_SECRET) return { ok: false, retry: false, error: "NOTIFY_SECRET is not set: completion webhooks are signed, and none is sent unsigned" };
  const headers = {
    "content-type": "application/json",
    "user-agent": "edgework-notify",
    [EVENT_ID_HEADER]: body.id,
    [SIGNATURE_HEADER]: await signatureHeader(vars.NOTIFY_SECRET, body.json, opts.now),
  };
  // The URL was checked above; every hop would be checked too, but none is followed.
  const allow = { entries: [shownOrigin(url)], allows: (u: URL) => notifyUrlProblem(u.href, vars.NOTIFY_ALLOW_HOSTS) === undefined };
  try {
    const res = await whenConnected(opts.connections, (fetch) =>
      guardedFetch({ allow, maxRedirects: 0, fetch })(url, { method: "POST", headers, body: body.json, signal: AbortSignal.timeout(opts.timeoutMs) }),
    );
    await res.body?.cancel();
    if (res.ok) return { ok: true, status: res.status };
    const retry = res.status === 408 || res.status === 429 || res.status >= 500;
    return { ok: false, retry, status: res.status, error: `answered ${res.status}` };
  } catch (err) {
    const timeout = err instanceof Error && err.name === "TimeoutError";
    // guardedFetch's own refusals (a redirect) are lasting; a network failure may pass.
    const lasting = err instanceof Error && err.name === "ToolError";
    const text = timeout ? `no answer within ${opts.timeoutMs} ms` : err instanceof Error ? err.message : String(err);
    return { ok: false, retry: !lasting, error: originsOnly(text).slice(0, MAX_ERROR_CHARS) };
  }
}

/**
 * Every URL in an error's text as its origin: the notify URL's path or query may carry a token,
 * and an error may show it normalized, or resolved into a redirect's target (`Location: ?x`).
 * The pattern cannot backtrack: one run of non-space characters after the scheme.
 */
const originsOnly = (text: string) => text.replace(/https?:\/\/[^\s()]+/gi, (u) => shownOrigin(u));
