/**
 * Where a completion webhook may be posted. A notify URL comes from a trigger file, a
 * `POST /runs` body or a var, and is treated as hostile: it decides where a run's
 * outcome is sent. Without NOTIFY_ALLOW_HOSTS: https to a public host name on port 443
 * only — no IP literal, no single-label or local name (`localhost`, `*.local`,
 * `*.internal`…). With NOTIFY_ALLOW_HOSTS (`host`, `host:port`, `*.domain`, comma- or
 * space-separated): only those hosts, over https or http (an explicit opt-in, e.g. a
 * receiver on a private tunnel or a test server). Never credentials in the URL (the
 * signature is the credential), never a fragment; at most MAX_NOTIFY_URL_CHARS.
 * Redirects are never followed (deliver.ts), so a listed host cannot point elsewhere.
 */

import { MAX_NOTIFY_URL_CHARS } from "../api/bounds";
import { allowList, type AllowList } from "../engine/net/allow-list";

export { MAX_NOTIFY_URL_CHARS };

/** Names that never leave a machine or a private network, whatever DNS says (RFC 6761, 6762, 8375, common private suffixes). */
const LOCAL_SUFFIXES = ["localhost", "local", "internal", "intranet", "lan", "home.arpa", "localdomain", "corp", "private"];

/** NOTIFY_ALLOW_HOSTS as an allow-list, or the reason an entry is unusable; undefined when unset. */
export function notifyAllowList(entries: string | undefined): AllowList | string | undefined {
  const list = (entries ?? "").split(/[\s,]+/).filter(Boolean);
  if (!list.length) return undefined;
  try {
    return allowList(list);
  } catch (err) {
    return `NOTIFY_ALLOW_HOSTS: ${(err as Error).message.replace(/^allow: /, "")}`;
  }
}

/**
 * What the trigger file can tell of a notify URL before the app's vars are known (its
 * `${NAME}`s are filled at a run's start, where `notifyUrlProblem` checks it whole).
 */
export function notifyUrlShapeProblem(raw: string): string | undefined {
  if (raw.length > MAX_NOTIFY_URL_CHARS) return `${raw.length} characters, over ${MAX_NOTIFY_URL_CHARS}`;
  const filled = raw.replace(/\$\{[A-Z][A-Z0-9_]*\}/g, "x");
  let url: URL;
  try {
    url = new URL(raw.startsWith("${") ? `https://${filled}` : filled);
  } catch {
    return "not a URL";
  }
  if (url.username || url.password) return "carries credentials (user:password@): they are refused, the signature (NOTIFY_SECRET) is the credential";
  if (url.hash) return "has a #fragment, which is never sent: leave it out";
  if (url.protocol !== "https:" && url.protocol !== "http:") return `the scheme is ${url.protocol}; only https (or http to a host of NOTIFY_ALLOW_HOSTS)`;
  return undefined;
}

/** Why `raw` may not be a notify URL under `allowHosts` (NOTIFY_ALLOW_HOSTS), or undefined when it may. */
export function notifyUrlProblem(raw: unknown, allowHosts?: string): string | undefined {
  if (typeof raw !== "string" || !raw) return "a notify URL is a non-empty string";
  if (raw.length > MAX_NOTIFY_URL_CHARS) return `the notify URL is ${raw.length} characters, over ${MAX_NOTIFY_URL_CHARS}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "the notify URL is not a URL";
  }
  if (url.username || url.password)
    return "the notify URL carries credentials (user:password@): they are refused, the signature (NOTIFY_SECRET) is the credential";
  if (url.hash) return "the notify URL has a #fragment, which is never sent: leave it out";
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return `the notify URL's scheme is ${url.protocol}; only https (or http to a host of NOTIFY_ALLOW_HOSTS)`;
  const listed = notifyAllowList(allowHosts);
  if (typeof listed === "string") return listed;
  if (listed) return listed.allows(url) ? undefined : `host ${url.host} is not in NOTIFY_ALLOW_HOSTS (${listed.entries.join(", ")})`;
  if (url.protocol !== "https:") return "the notify URL must be https (NOTIFY_ALLOW_HOSTS lists the hosts that may take http)";
  if (url.port !== "") return `the notify URL names port ${url.port}; only 443 (list ${url.host} in NOTIFY_ALLOW_HOSTS to allow it)`;
  const host = url.hostname.replace(/\.$/, "");
  // The URL parser writes every IPv4 form (decimal, hex, short) as dotted decimal, and IPv6 in brackets.
  if (host.startsWith("[") || /^[0-9.]+$/.test(host))
    return `the notify URL's host ${host} is an IP address: name a public host (or list it in NOTIFY_ALLOW_HOSTS)`;
  if (!host.includes(".")) return `the notify URL's host "${host}" is not a public name`;
  if (LOCAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) return `the notify URL's host ${host} is a local name`;
  return undefined;
}

/** What the run records of where it posted: the origin only (a path or query may carry a token). */
export const shownOrigin = (raw: string): string => {
  try {
    return new URL(raw).origin;
  } catch {
    return "(not a URL)";
  }
};
