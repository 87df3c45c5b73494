import * as z from "zod";
import { ToolError } from "../../errors";
import { globToRegExp } from "../../glob";
import { defineToolset, tool } from "../define";

const config = z.strictObject({
  /** Hosts this instance may reach (`api.github.com`, `*.example.com`); others are refused unsent. */
  allow: z.array(z.string().min(1)).min(1),
  /** Headers sent with every request (e.g. Authorization), merged under the call's own. */
  headers: z.record(z.string(), z.string()).default({}),
  timeout_ms: z.number().int().min(1).max(120_000).default(10_000),
  max_response_chars: z.number().int().min(1).max(1_000_000).default(20_000),
});

const SAFE_METHODS = new Set(["GET", "HEAD"]);

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `fetch` confined to an allow-list of hosts; responses truncated with a flag saying so. */
export const http = defineToolset({
  kind: "http",
  description: "HTTP requests to allowed hosts",
  config,
  create: (c) => ({ ...c, hosts: c.allow.map((h) => globToRegExp(h, { ignoreCase: true })) }),
  tools: {
    fetch: tool({
      description: "Make an HTTP request and get the status and response text",
      input: z.strictObject({
        url: z.url(),
        method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
        headers: z.record(z.string(), z.string()).optional(),
        body: z.string().optional(),
      }),
      // Reads are allowed by default; anything that can change something asks.
      approval: (args) => (SAFE_METHODS.has(args.method ?? "GET") ? "allow" : "ask"),
      async run(args, _ctx, self: z.output<typeof config> & { hosts: RegExp[] }) {
        const url = new URL(args.url);
        if (url.protocol !== "https:" && url.protocol !== "http:") throw new ToolError(`only http(s) URLs are allowed, not ${url.protocol}`);
        if (!self.hosts.some((h) => h.test(url.hostname))) {
          throw new ToolError(`host ${url.hostname} is not allowed; this toolset may reach: ${self.allow.join(", ")}`);
        }
        const headers = new Headers({ ...self.headers, ...args.headers });
        // APIs such as GitHub's expect JSON to be labelled as such; models rarely add the header.
        if (args.body !== undefined && !headers.has("content-type") && isJson(args.body)) headers.set("content-type", "application/json");
        let res: Response;
        try {
          res = await fetch(url, {
            method: args.method,
            headers,
            body: SAFE_METHODS.has(args.method) ? undefined : args.body,
            signal: AbortSignal.timeout(self.timeout_ms),
          });
        } catch (err) {
          const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
          throw new ToolError(timedOut ? `request to ${url.host} timed out after ${self.timeout_ms} ms` : `request to ${url.host} failed: ${String(err)}`);
        }
        const text = await res.text();
        return {
          status: res.status,
          content_type: res.headers.get("content-type"),
          body: text.slice(0, self.max_response_chars),
          truncated: text.length > self.max_response_chars,
        };
      },
    }),
  },
});
