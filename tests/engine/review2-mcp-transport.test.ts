import { describe, expect, it } from "vitest";
import { McpSession } from "../../src/engine/mcp/session";

/**
 * Review (issue 29): our MCP client answers every request a server sends it on a POST's
 * event stream (the SDK's Protocol: `ping` answered, anything else MethodNotFound), each
 * answer one more POST to the server. Nothing bounds how many: one tool call whose answer
 * stream carries N requests costs N subrequests of the activation (Cloudflare ends an
 * invocation's fetches past its subrequest limit) and puts N requests in the activation's
 * connection line ahead of every other call. The 4 MiB cap on the stream allows ~80,000.
 */

const INIT = { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "hostile", version: "1" } };
const event = (m: unknown) => `event: message\ndata: ${JSON.stringify(m)}\n\n`;

describe("review2: a hostile MCP server's requests on an answer stream", () => {
  it("one tool call whose answer stream carries 2,000 server requests makes a bounded number of requests, not one per server request", async () => {
    const sent: string[] = [];
    const fetch = async (_url: string | URL, init?: RequestInit) => {
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      sent.push(`${init?.method} ${body?.method ?? (body && "id" in body ? `answer ${body.id}` : "")}`);
      if (body?.method === "initialize") return Response.json({ jsonrpc: "2.0", id: body.id, result: INIT }, { headers: { "mcp-session-id": "s1" } });
      if (body?.method !== "tools/call") return new Response(null, { status: 202 });
      const requests = Array.from({ length: 2000 }, (_, k) => event({ jsonrpc: "2.0", id: `srv-${k}`, method: k % 2 ? "ping" : "roots/list" }));
      return new Response([...requests, event({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: "done" }] } })].join(""), {
        headers: { "content-type": "text/event-stream" },
      });
    };
    const session = new McpSession({ url: "https://mcp.example.com/mcp", headers: {}, timeoutMs: 5_000, fetch, label: 'MCP server "h"' });
    expect(await session.callTool("t", {})).toMatchObject({ content: [{ text: "done" }] });
    // Let the answers the client queued go out (they are sent without being awaited).
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
    // initialize, notifications/initialized, tools/call: and a handful at most beyond them.
    expect(sent.length).toBeLessThanOrEqual(10);
  });
});
