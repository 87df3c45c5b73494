/**
 * Where outbound requests may go: a list of `host`, `host:port` or `*.domain[:port]`.
 * An entry without a port allows only the default port of the URL's scheme
 * (80 for http, 443 for https), so `127.0.0.1` does not open every local service.
 * Matching is a comparison of normalized names, never a pattern built from input.
 */

interface AllowEntry {
  /** Normalized host as `URL.hostname` writes it (lowercase, punycode, `[v6]`). */
  host: string;
  /** `*.example.com`: any subdomain of `host`, not `host` itself. */
  subdomains: boolean;
  /** Undefined: only the scheme's default port. */
  port?: number;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { "http:": 80, "https:": 443 };

/** Parses one entry; returns the reason it is unusable as a string. */
function parseEntry(entry: string): AllowEntry | string {
  const subdomains = entry.startsWith("*.");
  const rest = subdomains ? entry.slice(2) : entry;
  if (rest.includes("*")) return `"${entry}": a wildcard is only allowed as a leading "*." (e.g. *.example.com)`;
  if (/[/?#@\\\s]/.test(rest)) return `"${entry}": write a host or host:port, not a URL`;
  // The port is what follows the last ":" outside an IPv6 literal's brackets.
  const close = rest.lastIndexOf("]");
  const colon = rest.lastIndexOf(":");
  const hasPort = colon > close && (close !== -1 || rest.indexOf(":") === colon);
  const hostPart = hasPort ? rest.slice(0, colon) : rest;
  let port: number | undefined;
  if (hasPort) {
    const digits = rest.slice(colon + 1);
    port = /^[0-9]{1,5}$/.test(digits) ? Number(digits) : NaN;
    if (!(port >= 1 && port <= 65535)) return `"${entry}": port "${digits}" is not a number from 1 to 65535`;
  }
  let url: URL;
  try {
    url = new URL(`http://${hostPart}`);
  } catch {
    return `"${entry}": "${hostPart}" is not a valid host name`;
  }
  if (!url.hostname || url.port !== "" || url.pathname !== "/") return `"${entry}": "${hostPart}" is not a valid host name`;
  return { host: url.hostname, subdomains, port };
}

/** The problem with an allow entry, or undefined when it is usable (for config schemas). */
export function allowEntryProblem(entry: string): string | undefined {
  const parsed = parseEntry(entry);
  return typeof parsed === "string" ? parsed : undefined;
}

export interface AllowList {
  /** The entries as configured, for messages. */
  readonly entries: readonly string[];
  allows(url: URL): boolean;
}

/** An allow-list from config entries; throws on an unusable entry (schemas check first with `allowEntryProblem`). */
export function allowList(entries: readonly string[]): AllowList {
  const parsed = entries.map((e) => {
    const p = parseEntry(e);
    if (typeof p === "string") throw new Error(`allow: ${p}`);
    return p;
  });
  return {
    entries,
    allows(url) {
      const defaultPort = DEFAULT_PORTS[url.protocol];
      if (defaultPort === undefined) return false;
      const port = url.port === "" ? defaultPort : Number(url.port);
      const host = url.hostname;
      return parsed.some(
        (e) => (e.port ?? defaultPort) === port && (e.subdomains ? host.length > e.host.length + 1 && host.endsWith(`.${e.host}`) : host === e.host),
      );
    },
  };
}
