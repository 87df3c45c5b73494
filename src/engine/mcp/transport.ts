import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { serverSentEvents } from "./sse";

/**
 * The client side of MCP's Streamable HTTP transport as edgework uses it: each message
 * POSTed, its answer read from the response (JSON, or an event stream), the session id
 * and protocol version sent back, the session ended by DELETE. A session lives for one
 * tool call, so there is no standalone GET stream for server-initiated messages (we
 * offer the server no sampling, roots or elicitation) and no reconnection. Instead of
 * the SDK's `StreamableHTTPClientTransport`, whose import of its OAuth client (zod
 * schemas built at load) costs every cold start ~5 ms for an `authProvider` edgework
 * never passes: an MCP server's credentials are headers in the instance's config.
 */
/** Requests of the server's own answered per session (we offer no sampling, roots or elicitation: a ping at most); the rest are dropped. */
const MAX_SERVER_REQUESTS = 4;

export class HttpTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  sessionId?: string;
  private protocolVersion?: string;
  private readonly aborter = new AbortController();
  /** Requests the server sent us in this session (each would be answered with a POST of ours). */
  private serverRequests = 0;

  constructor(
    private readonly url: URL,
    private readonly fetch: (url: URL, init: RequestInit) => Promise<Response>,
    private readonly headers: Record<string, string>,
  ) {}

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  private requestHeaders(extra: Record<string, string>): Headers {
    const h = new Headers(this.headers);
    if (this.sessionId) h.set("mcp-session-id", this.sessionId);
    if (this.protocolVersion) h.set("mcp-protocol-version", this.protocolVersion);
    for (const [k, v] of Object.entries(extra)) h.set(k, v);
    return h;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    try {
      const res = await this.fetch(this.url, {
        method: "POST",
        headers: this.requestHeaders({ "content-type": "application/json", accept: "application/json, text/event-stream" }),
        body: JSON.stringify(message),
        signal: this.aborter.signal,
      });
      this.sessionId = res.headers.get("mcp-session-id") ?? this.sessionId;
      if (!res.ok) {
        const text = await res.text().catch(() => "");
        throw new Error(`Streamable HTTP error: Error POSTing to endpoint (HTTP ${res.status}): ${text.slice(0, 300)}`);
      }
      // A notification or a response of ours gets 202 and no body; only a request is answered.
      if (res.status === 202 || !("method" in message && "id" in message)) return void (await res.body?.cancel());
      const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (type === "text/event-stream") return void this.readEvents(res.body);
      if (type === "application/json") {
        const data: unknown = await res.json();
        for (const m of Array.isArray(data) ? data : [data]) this.received(JSONRPCMessageSchema.parse(m));
        return;
      }
      await res.body?.cancel();
      throw new Error(`Streamable HTTP error: Unexpected content type: ${type || "none"}`);
    } catch (err) {
      this.onerror?.(err as Error);
      throw err;
    }
  }

  /** The answer's event stream, read as it arrives (progress may come before the result); a broken stream is reported. */
  private async readEvents(body: ReadableStream<Uint8Array> | null): Promise<void> {
    if (!body) return;
    try {
      const reader = body.pipeThrough(new TextDecoderStream()).pipeThrough(serverSentEvents()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        if (!value.data || (value.event && value.event !== "message")) continue;
        try {
          this.received(JSONRPCMessageSchema.parse(JSON.parse(value.data)));
        } catch (err) {
          this.onerror?.(err as Error);
        }
      }
    } catch (err) {
      this.onerror?.(new Error(`SSE stream disconnected: ${err}`));
    }
  }

  /**
   * A message from the server, handed to the protocol, but no more than
   * MAX_SERVER_REQUESTS requests of the server's per session: the protocol answers each
   * request (a ping, a method we do not offer) with a POST, and a hostile server could
   * stream thousands of them into one tool call, each a subrequest of the activation.
   */
  private received(message: JSONRPCMessage): void {
    if ("method" in message && "id" in message && ++this.serverRequests > MAX_SERVER_REQUESTS) {
      if (this.serverRequests === MAX_SERVER_REQUESTS + 1)
        this.onerror?.(new Error(`the server sent more than ${MAX_SERVER_REQUESTS} requests of its own in this session: the rest are not answered`));
      return;
    }
    this.onmessage?.(message);
  }

  /** Ends the session on the server (405: it keeps none). */
  async terminateSession(): Promise<void> {
    if (!this.sessionId) return;
    const res = await this.fetch(this.url, { method: "DELETE", headers: this.requestHeaders({}), signal: this.aborter.signal });
    await res.body?.cancel();
    if (!res.ok && res.status !== 405) throw new Error(`Streamable HTTP error: Failed to terminate session (HTTP ${res.status})`);
    this.sessionId = undefined;
  }

  async close(): Promise<void> {
    this.aborter.abort();
    this.onclose?.();
  }
}
