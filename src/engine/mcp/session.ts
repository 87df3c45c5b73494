import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { messageOf, ToolError } from "../errors";
import { McpClient } from "./client";
import { BoundedOutputValidator } from "./output-validator";
import { HttpTransport } from "./transport";

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface SessionOptions {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Every request of the transport goes through this (URL policy, redirects). */
  fetch: FetchLike;
  /** Names the server in every error: `MCP server "gh" (mcp.example.com)`. */
  label: string;
}

/** Bytes one response may carry (a JSON body, or one POST's event stream). */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const MAX_LIST_PAGES = 10;
const MAX_REASON_CHARS = 300;

/** A response whose body errors once it passes `max` bytes: a server cannot make us buffer more. */
function capped(res: Response, max: number): Response {
  if (!res.body) return res;
  let seen = 0;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        seen += chunk.byteLength;
        if (seen > max) out.error(new Error(`response larger than ${max} bytes`));
        else out.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/**
 * One MCP session through our client and transport on the SDK's protocol, opened at first use (a replay whose
 * steps are all recorded never contacts the server) and closed with its instance.
 * Failures become `ToolError`s naming the server and the reason.
 */
export class McpSession {
  private client?: Promise<McpClient>;
  /** When the tool call under way must be over, its result checked included. */
  private deadline = Infinity;

  constructor(private readonly opts: SessionOptions) {}

  /** Bounded requests: a time limit on everything but the long-lived GET event stream, a byte cap on every body. */
  private readonly fetch: FetchLike = async (url, init) => {
    const bounded =
      init?.method === "GET" ? init : { ...init, signal: AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), ...(init?.signal ? [init.signal] : [])]) };
    return capped(await this.opts.fetch(url, bounded), MAX_RESPONSE_BYTES);
  };

  private fail(what: string, err: unknown): never {
    const reason = messageOf(err);
    throw new ToolError(`${this.opts.label}: ${what} failed: ${reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS)}…` : reason}`);
  }

  private connect(): Promise<McpClient> {
    this.client ??= (async () => {
      const client = new McpClient({ name: "edgework", version: "1" }, new BoundedOutputValidator(() => this.deadline - Date.now()));
      const transport = new HttpTransport(new URL(this.opts.url), this.fetch, this.opts.headers);
      try {
        await client.connect(transport, { timeout: this.opts.timeoutMs });
      } catch (err) {
        this.client = undefined;
        await client.close().catch(() => undefined);
        this.fail("connecting", err);
      }
      return client;
    })();
    return this.client;
  }

  /** The server's tools, page by page; stops once more than `max` are in (the caller refuses that many). */
  async listTools(max: number): Promise<Tool[]> {
    const client = await this.connect();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.opts.timeoutMs });
        tools.push(...res.tools);
        if (tools.length > max || !res.nextCursor) break;
        cursor = res.nextCursor;
      }
    } catch (err) {
      this.fail("listing tools", err);
    }
    return tools;
  }

  /** One call within `timeoutMs` all told: connecting, the request, and checking the result against the tool's output schema. */
  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    this.deadline = Date.now() + this.opts.timeoutMs;
    try {
      const client = await this.connect();
      const left = this.deadline - Date.now();
      if (left <= 0) this.fail(`calling ${name}`, `no time left of timeout_ms (${this.opts.timeoutMs} ms) after connecting`);
      return await client.callTool({ name, arguments: args }, { timeout: left });
    } catch (err) {
      if (err instanceof ToolError) throw err;
      this.fail(`calling ${name}`, err);
    } finally {
      this.deadline = Infinity;
    }
  }

  /** Ends the session (best effort: the server may be gone) and the client's streams. */
  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    const client = await pending?.catch(() => undefined);
    if (!client) return;
    await (client.transport as HttpTransport | undefined)?.terminateSession().catch(() => undefined);
    await client.close();
  }
}
