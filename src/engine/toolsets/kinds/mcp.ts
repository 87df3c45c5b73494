import * as z from "zod";
import { RunError, ToolError } from "../../errors";
import { globMatcher } from "../../glob";
import { toolValue } from "../../mcp/result";
import { McpSession, type FetchLike } from "../../mcp/session";
import { MCP_TOOL_LIMITS, offeredTools } from "../../mcp/tool-list";
import { usesVars } from "../interpolate";
import { allowList } from "../../net/allow-list";
import { connectedFetch, type Connections } from "../../net/connection-slots";
import { guardedFetch } from "../../net/guarded-fetch";
import { toolDefOf } from "../wrappers/journaled-tools";
import type { ToolsetKind } from "../../types/kind";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** https anywhere; plain http only to this machine (development). No credentials in the URL. */
const reachable = (url: URL) => !url.username && !url.password && (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.test(url.hostname)));

const isReachableUrl = (s: string) => URL.canParse(s) && reachable(new URL(s));

const config = z.strictObject({
  /** The server's Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp. */
  url: z
    .string()
    .refine((s) => usesVars(s) || isReachableUrl(s), "must be an https URL (or http to localhost/127.0.0.1 for development), without user:password"),
  /** Sent with every request to that URL (e.g. Authorization); never to another origin. */
  headers: z.record(z.string(), z.string()).default({}),
  /** Tool names or globs to offer (default all). */
  tools: z.array(z.string().min(1).max(128)).min(1).optional(),
  timeout_ms: z.number().int().min(1).max(120_000).default(30_000),
  max_result_chars: z.number().int().min(1).max(1_000_000).default(20_000),
});

/**
 * The transport's only way out: the URL policy, and the `http` kind's guarded fetch
 * confined to the server's own origin and following no redirect (a 3xx is an error,
 * as the README promises), so the configured headers (secrets) never leave that URL.
 * Each request takes its turn for one of the invocation's connections until its
 * response headers arrive (a long-lived event stream holds none after that).
 */
export function mcpFetch(serverUrl: string, headers: Record<string, string>, connections: Connections): FetchLike {
  const server = new URL(serverUrl);
  // An https server stays https on every hop (a plain-http loopback server is for development).
  const guarded = guardedFetch({
    allow: allowList([server.host]),
    headers,
    httpsOnly: server.protocol === "https:",
    maxRedirects: 0,
    fetch: connectedFetch(connections),
  });
  return async (url, init) => {
    const target = new URL(url);
    if (!reachable(target)) throw new Error(`refused to reach ${target.protocol}//${target.host}: only https, or http to a loopback address`);
    return guarded(target, init);
  };
}

/**
 * A remote MCP server's tools (Streamable HTTP: our client on the SDK's protocol, src/engine/mcp/). The tools
 * come from the server at run time: `dynamic`, so the engine journals the list
 * each call sees. Default approval from annotations: `readOnlyHint: true` allows,
 * anything else asks.
 */
export const mcp: ToolsetKind = {
  kind: "mcp",
  description: "The tools of a remote MCP server",
  scope: "call",
  config,
  definitions: [],
  dynamic: true,
  async instantiate(id, raw, init) {
    const c = raw as z.output<typeof config>;
    const label = `MCP server "${init.name}" (${new URL(c.url).host})`;
    const patterns = c.tools?.map((p) => globMatcher(p));
    const keep = (name: string) => !patterns || patterns.some((matches) => matches(name));
    // Exposed names carry the instance prefix and must still fit the 64-character rule.
    const maxNameLength = 64 - (init.name === "mcp" ? 0 : init.name.length + 1);
    const session = new McpSession({ url: c.url, headers: c.headers, timeoutMs: c.timeout_ms, fetch: mcpFetch(c.url, c.headers, init.connections), label });
    return {
      id,
      async listTools() {
        try {
          return offeredTools(await session.listTools(MCP_TOOL_LIMITS.listed), { keep, maxNameLength, label }).map(toolDefOf);
        } catch (err) {
          // No tool call to answer yet: the worker call cannot start without its tools.
          throw err instanceof ToolError ? new RunError("config", err.message, false, { cause: err }) : err;
        }
      },
      async callTool(name, args) {
        if (!keep(name)) throw new ToolError(`${label}: tool "${name}" is not among the tools this worker may use`);
        if (!args || typeof args !== "object" || Array.isArray(args)) throw new ToolError(`invalid arguments for ${name}: expected an object`);
        return toolValue(await session.callTool(name, args as Record<string, unknown>), c.max_result_chars, label);
      },
      close: () => session.close(),
    };
  },
};
