import { ToolError } from "../errors";
import type { AllowList } from "./allow-list";

export interface OutboundPolicy {
  allow: AllowList;
  /**
   * Headers from configuration (often secrets such as `Authorization: Bearer ${TOKEN}`),
   * sent under the request's own headers to the first request's origin only.
   */
  headers?: Readonly<Record<string, string>>;
  /** Refuse every hop that is not https (an https server redirecting to plain http would resend the body in clear). */
  httpsOnly?: boolean;
  /** Redirects followed before giving up; default 5. 0: a redirect is an error naming where it pointed. */
  maxRedirects?: number;
  /** The underlying fetch; default `globalThis.fetch` (looked up per call, so spies see it). */
  fetch?: typeof fetch;
}

/** The last hop's response, with the URL it came from (after redirects). */
export type GuardedResponse = Response & { readonly finalUrl: string };

export type GuardedFetch = (input: string | URL | Request, init?: RequestInit) => Promise<GuardedResponse>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that describe a body; dropped with the body when a redirect turns the request into a GET. */
const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"];
/** Credentials that never follow a redirect to another origin, whoever set them (as in the Fetch standard). */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

/** A URL for messages: long enough to recognise, never long enough to flood a result. */
const shown = (url: URL) => (url.href.length > 200 ? `${url.href.slice(0, 200)}…` : url.href);

function check(policy: OutboundPolicy, url: URL, hop: number): void {
  const { allow } = policy;
  const what = hop === 0 ? "" : `redirect ${hop} to ${shown(url)} refused: `;
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ToolError(`${what}only http(s) URLs are allowed, not ${url.protocol}`);
  if (policy.httpsOnly && url.protocol !== "https:") throw new ToolError(`${what}only https is allowed here`);
  if (!allow.allows(url)) throw new ToolError(`${what}host ${url.host} is not allowed; this toolset may reach: ${allow.entries.join(", ")}`);
}

/**
 * A `fetch` confined to an allow-list on every hop. Redirects are followed by hand
 * (`redirect: "manual"`): each Location is checked before anything is sent to it;
 * at most `maxRedirects` hops; 303 (and 301/302 after a POST) become a GET without
 * body, 307/308 keep method and body; configured headers and credentials are
 * dropped for good once a hop leaves the first request's origin.
 * Fetch-compatible, so an SDK's transport can take it as its `fetch`.
 */
export function guardedFetch(policy: OutboundPolicy): GuardedFetch {
  const maxRedirects = policy.maxRedirects ?? 5;
  const configured = Object.keys(policy.headers ?? {}).map((h) => h.toLowerCase());
  return async function guarded(input, init = {}) {
    const request = input instanceof Request ? input : undefined;
    let url = new URL(input instanceof Request ? input.url : input);
    let method = (init.method ?? request?.method ?? "GET").toUpperCase();
    const headers = new Headers(policy.headers);
    for (const [k, v] of new Headers(init.headers ?? request?.headers)) headers.set(k, v);
    // Buffered, so a 307/308 can send it again.
    let body: RequestInit["body"] = init.body ?? (request?.body ? await request.arrayBuffer() : undefined);
    if (body instanceof ReadableStream) body = await new Response(body).arrayBuffer();
    const signal = init.signal ?? request?.signal;
    const origin = url.origin;
    const doFetch = policy.fetch ?? globalThis.fetch;

    for (let hop = 0; ; hop++) {
      check(policy, url, hop);
      const res = await doFetch(url, { ...init, method, headers, body, signal, redirect: "manual" });
      const location = REDIRECTS.has(res.status) ? res.headers.get("location") : null;
      if (location === null) return Object.defineProperty(res, "finalUrl", { value: url.href, enumerable: true }) as GuardedResponse;
      await res.body?.cancel();
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new ToolError(`redirect ${hop + 1} from ${shown(url)} has an invalid Location`);
      }
      if (maxRedirects === 0) throw new ToolError(`answered with a redirect (${res.status} to ${shown(next)}); redirects are not followed here`);
      if (hop >= maxRedirects) throw new ToolError(`too many redirects: more than ${maxRedirects}, the last to ${shown(next)}`);
      if (res.status === 303 ? method !== "HEAD" : (res.status === 301 || res.status === 302) && method === "POST") {
        method = "GET";
        body = undefined;
        for (const h of BODY_HEADERS) headers.delete(h);
      }
      if (next.origin !== origin) for (const h of [...configured, ...CREDENTIAL_HEADERS]) headers.delete(h);
      url = next;
    }
  };
}
