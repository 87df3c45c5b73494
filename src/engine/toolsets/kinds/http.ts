import * as z from "zod";
import { propagates, ToolError, type ToolFailure } from "../../errors";
import { allowEntryProblem, allowList } from "../../net/allow-list";
import { ConnectionWaitError, whenConnected, type Connections } from "../../net/connection-slots";
import { guardedFetch, type GuardedResponse, type OutboundPolicy } from "../../net/guarded-fetch";
import { cappedText, readBodyCapped } from "../../net/read-body";
import { saveResponse } from "../../attachments/save-response";
import { defineToolset, tool } from "../define";
import { prettyValue } from "../unfold-json";
import type { CallDescription } from "../../types/toolset";

const allowEntry = z
  .string()
  .min(1)
  .superRefine((entry, ctx) => {
    // `${VAR}` entries are checked again once the variables are filled in.
    const problem = entry.includes("${") ? undefined : allowEntryProblem(entry);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const config = z.strictObject({
  /**
   * Hosts this instance may reach, on every redirect hop: `api.github.com` (default
   * port of the scheme only), `127.0.0.1:8080` (that port), `*.example.com` (subdomains).
   */
  allow: z.array(allowEntry).min(1),
  /** Headers sent with every request (e.g. Authorization), merged under the call's own; never sent to another origin. */
  headers: z.record(z.string(), z.string()).default({}),
  timeout_ms: z.number().int().min(1).max(120_000).default(10_000),
  /** Bounds the response body in characters and in UTF-8 bytes; the rest is never read. */
  max_response_chars: z.number().int().min(1).max(1_000_000).default(20_000),
  /** Bounds a response saved to a files instance (`save_to`), in bytes; the files instance's max_file_bytes bounds it too. */
  max_download_bytes: z.number().int().min(1).max(20_000_000).default(5_000_000),
  /** Send the call's `Idempotency-Key` on requests other than GET/HEAD. */
  idempotency_key: z.boolean().default(true),
});

const SAFE_METHODS = new Set(["GET", "HEAD"]);
/** Headers many servers honour to run another method than the request line's. */
const METHOD_OVERRIDES = ["x-http-method-override", "x-http-method", "x-method-override"];

/**
 * The method a server may act on: the request's, unless a method-override header
 * names a method that is not GET/HEAD. Counted for the approval default, so
 * `GET` + `X-HTTP-Method-Override: DELETE` asks like a DELETE. Takes raw
 * arguments (approval policies see them before validation).
 */
function effectiveMethod(args: { method?: unknown; headers?: unknown }): string {
  const method = typeof args.method === "string" ? args.method.toUpperCase() : "GET";
  if (!args.headers || typeof args.headers !== "object") return method;
  for (const [name, value] of Object.entries(args.headers)) {
    if (!METHOD_OVERRIDES.includes(name.toLowerCase())) continue;
    const override = String(value).trim().toUpperCase();
    if (override && !SAFE_METHODS.has(override)) return override;
  }
  return method;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `POST api.github.com/repos/o/r/issues/42/comments`, then the call's headers and its body, pretty-printed. */
function describeRequest(args: { url: string; method: string; headers?: Record<string, string>; body?: string; save_to?: string }): CallDescription {
  const url = new URL(args.url);
  const effective = effectiveMethod(args);
  const method = effective === args.method ? effective : `${effective} (sent as ${args.method} with a method-override header)`;
  const headers = Object.entries(args.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
  const parts = [...(headers.length ? [headers.join("\n")] : []), ...(args.body !== undefined ? [prettyValue(args.body)] : [])];
  const saved = args.save_to !== undefined ? `, saved to ${args.save_to}` : "";
  return { summary: `${method} ${url.host}${url.pathname}${url.search}${saved}`, ...(parts.length ? { details: parts.join("\n\n") } : {}) };
}

/**
 * A response's status as a retry policy reads it: 429 and 5xx are failures it may
 * retry, with the delay a Retry-After of whole seconds asks for (an HTTP date, or
 * anything else, is ignored: the policy's backoff applies). Bounded by the policy.
 */
export function statusFailure(status: number, retryAfter?: string | null): ToolFailure | undefined {
  if (status !== 429 && (status < 500 || status > 599)) return undefined;
  const seconds = retryAfter && /^\d{1,6}$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : undefined;
  return { reason: "status", status, ...(seconds === undefined ? {} : { retryAfterMs: seconds * 1000 }) };
}

type Self = z.output<typeof config> & { policy: OutboundPolicy; connections: Connections };

/** `fetch` confined to an allow-list of hosts and ports on every hop; responses read up to a cap, with a flag saying so. */
export const http = defineToolset({
  kind: "http",
  description: "HTTP requests to allowed hosts",
  config,
  create: (c, init): Self => ({ ...c, policy: { allow: allowList(c.allow), headers: c.headers }, connections: init.connections }),
  tools: {
    fetch: tool({
      description:
        "Make an HTTP request and get the status and response text; with save_to, store the response body (an image, a PDF) in a files toolset instead",
      input: z.strictObject({
        url: z.url(),
        method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
        headers: z.record(z.string(), z.string()).optional(),
        body: z.string().optional(),
        save_to: z
          .string()
          .min(1)
          .max(1024)
          .optional()
          .describe(
            'save the response body as this file of your files toolset, e.g. "docs:img.png" (a path as its read_file takes it, or a bare path with one files toolset); answers with its type and size',
          ),
      }),
      // Reads are allowed by default; anything that can change something asks.
      // A read that saves into the worker's files writes there: it asks like a write.
      approval: (args) => (SAFE_METHODS.has(effectiveMethod(args)) && args.save_to === undefined ? "allow" : "ask"),
      // A rule on `method` sees what the server acts on: `GET` with `X-HTTP-Method-Override: DELETE` is a DELETE.
      ruleArgs: (args) => ({ ...args, method: effectiveMethod(args) }),
      describe: describeRequest,
      failure: (r) => {
        const res = r as { status?: unknown; retry_after?: unknown } | null;
        if (typeof res?.status !== "number" || res.status < 400) return undefined;
        return statusFailure(res.status, typeof res.retry_after === "string" ? res.retry_after : undefined) ?? { reason: "status", status: res.status };
      },
      async run(args, ctx, self: Self) {
        const url = new URL(args.url);
        const headers = new Headers(args.headers);
        // APIs such as GitHub's expect JSON to be labelled as such; models rarely add the header.
        if (args.body !== undefined && !headers.has("content-type") && isJson(args.body)) headers.set("content-type", "application/json");
        const hasOwnKey = headers.has("idempotency-key") || Object.keys(self.headers).some((h) => h.toLowerCase() === "idempotency-key");
        if (self.idempotency_key && !hasOwnKey && !SAFE_METHODS.has(effectiveMethod(args))) headers.set("idempotency-key", ctx.idempotencyKey);
        // A bad target is refused before anything is fetched.
        if (args.save_to !== undefined && !ctx.files) throw new ToolError("save_to: a global-scoped http instance cannot reach a worker's files");
        const target = args.save_to === undefined ? undefined : ctx.files!.locate(args.save_to);
        try {
          // timeout_ms counts from when the request starts: a call waiting for one of the invocation's
          // connections behind slow ones loses none of it (the wait has its own bound, connection-slots.ts).
          return await whenConnected(self.connections, async (fetch) => {
            const signal = AbortSignal.timeout(self.timeout_ms);
            const body = SAFE_METHODS.has(args.method) ? undefined : args.body;
            const res: GuardedResponse = await guardedFetch({ ...self.policy, fetch })(url, { method: args.method, headers, body, signal });
            if (target) return await saveResponse(res, target, self.max_download_bytes);
            // A cap in bytes is a cap in characters too: no character is shorter than a byte.
            const read = await readBodyCapped(res, self.max_response_chars);
            // When to ask again, as the server said (429, 503): bounded, it is upstream text.
            const retryAfter = statusFailure(res.status) && res.headers.get("retry-after")?.slice(0, 64);
            return {
              status: res.status,
              content_type: res.headers.get("content-type"),
              final_url: res.finalUrl,
              body: cappedText(read),
              truncated: read.truncated,
              ...(retryAfter ? { retry_after: retryAfter } : {}),
            };
          });
        } catch (err) {
          // A state store that cannot write (save_to) stops the activation: never a tool result.
          if (err instanceof ToolError || propagates(err)) throw err;
          if (err instanceof ConnectionWaitError) throw new ToolError(`request to ${url.host} never started: ${err.message}`, { cause: err });
          const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
          throw new ToolError(timedOut ? `request to ${url.host} timed out after ${self.timeout_ms} ms` : `request to ${url.host} failed: ${String(err)}`, {
            cause: err,
            ...(timedOut ? { failure: { reason: "timeout" as const } } : {}),
          });
        }
      },
    }),
  },
});
