import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Messages in one POST: each request may start a run whose status is read for MCP_WAIT_SECONDS. */
export const MAX_BATCH = 10;
/** Characters of a request id or progress token: an id comes back in its answer, a token in every progress notification. */
export const MAX_ID_CHARS = 256;
/** Silence before the answer turns into an event stream and a comment keeps it alive (as the SDK's transport does, every 15 s). */
const KEEP_ALIVE_MS = 15_000;

const refuse = (status: number, code: number, message: string, headers?: Record<string, string>) =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

const isRequest = (m: JSONRPCMessage) => "method" in m && "id" in m;
const isAnswer = (m: JSONRPCMessage) => "result" in m || "error" in m;
const tooLong = (id: unknown) => typeof id === "string" && id.length > MAX_ID_CHARS;
const event = (m: JSONRPCMessage) => `event: message\ndata: ${JSON.stringify(m)}\n\n`;
const encoder = new TextEncoder();

/**
 * The server side of MCP's Streamable HTTP transport, stateless: one transport per
 * POST, whose requests are answered in its response — JSON once every request has its
 * answer, or an event stream as soon as the server sends something else first
 * (progress) or has been silent for KEEP_ALIVE_MS. No session, so no GET stream and no
 * DELETE (405). Instead of the SDK's `WebStandardStreamableHTTPServerTransport`
 * (sessions, resumability, event stores: 14 KiB of the bundle this server never uses).
 * The body is bounded before it gets here (the route's bodyLimit).
 */
export class StatelessTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** Requests of the POST not answered yet. */
  private readonly open = new Set<RequestId>();
  /** Answers held for the JSON response until the last one. */
  private readonly answers: JSONRPCMessage[] = [];
  private batch = false;
  private respond?: (res: Response) => void;
  private stream?: ReadableStreamDefaultController<Uint8Array>;
  private timer?: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(private readonly keepAliveMs = KEEP_ALIVE_MS) {}

  async start(): Promise<void> {}

  async handle(req: Request): Promise<Response> {
    if (req.method !== "POST")
      return refuse(405, -32000, "Method not allowed: this server keeps no sessions (no GET stream, no DELETE); POST each message", { allow: "POST" });
    const accept = req.headers.get("accept") ?? "";
    if (!accept.includes("application/json") || !accept.includes("text/event-stream"))
      return refuse(406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
    if ((req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json")
      return refuse(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
    const version = req.headers.get("mcp-protocol-version");
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return refuse(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version.slice(0, 40)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      );

    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return refuse(400, -32700, "Parse error: Invalid JSON");
    }
    this.batch = Array.isArray(body);
    const raw = this.batch ? (body as unknown[]) : [body];
    if (raw.length === 0 || raw.length > MAX_BATCH) return refuse(400, -32600, `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages, not ${raw.length}`);
    const messages: JSONRPCMessage[] = [];
    for (const [i, m] of raw.entries()) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      const at = this.batch ? `message ${i}` : "the message";
      if (!parsed.success) return refuse(400, -32600, `Invalid Request: ${at} is not a JSON-RPC 2.0 request, notification or response`);
      const { id, params } = parsed.data as { id?: unknown; params?: { _meta?: { progressToken?: unknown } } };
      if (tooLong(id) || tooLong(params?._meta?.progressToken))
        return refuse(400, -32600, `Invalid Request: ${at} has an id or progress token over ${MAX_ID_CHARS} characters`);
      if (isRequest(parsed.data)) {
        if (this.open.has(id as RequestId)) return refuse(400, -32600, `Invalid Request: ${at} repeats the id of another request in the batch`);
        this.open.add(id as RequestId);
      }
      messages.push(parsed.data);
    }

    if (!this.open.size) {
      for (const m of messages) this.onmessage?.(m);
      return new Response(null, { status: 202 });
    }
    const response = new Promise<Response>((resolve) => (this.respond = resolve));
    this.timer = setInterval(() => this.write(": keepalive\n\n"), this.keepAliveMs);
    for (const m of messages) this.onmessage?.(m);
    return response;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return; // the client went away: nobody reads it
    const answer = isAnswer(message);
    const id = answer ? (message as { id?: RequestId }).id : options?.relatedRequestId;
    // With no session there is no stream for a message that answers none of this POST's requests.
    if (id === undefined || !this.open.has(id))
      throw new Error(`no open request ${String(id)} of this POST to send a message for (a stateless server keeps no stream of its own)`);
    if (answer) this.open.delete(id);
    if (this.stream || !answer) this.write(event(message));
    else this.answers.push(message);
    if (!this.open.size) {
      if (this.stream) this.stream.close();
      else this.respond!(Response.json(this.batch ? this.answers : this.answers[0]));
      await this.close();
    }
  }

  /** Writes to the event stream, opening it first (with the answers held so far) when the response is still to be given. */
  private write(text: string): void {
    if (this.closed) return;
    if (!this.stream) {
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (this.stream = c), cancel: () => this.close() });
      this.respond!(new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" } }));
      for (const m of this.answers.splice(0)) this.write(event(m));
    }
    this.stream!.enqueue(encoder.encode(text));
  }

  /** Ends the POST's work: the keep-alive stops, and handlers still running see their signal aborted (a client that went away). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.onclose?.();
  }
}
