import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { HttpTransport } from "../../src/engine/mcp/transport";

type Seen = { method: string; headers: Record<string, string>; body: unknown };

/** A fake server: answers each request with the next of `responses`, recording what it was sent. */
function server(responses: Response[]) {
  const seen: Seen[] = [];
  const fetch = async (_url: URL, init: RequestInit) => {
    seen.push({
      method: init.method!,
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: init.body ? JSON.parse(String(init.body)) : undefined,
    });
    return responses.shift()!;
  };
  return { seen, fetch };
}

const request = (id: number, method: string): JSONRPCMessage => ({ jsonrpc: "2.0", id, method, params: {} });
const sse = (...events: unknown[]) =>
  new Response(events.map((e) => `event: message\ndata: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });

describe("the MCP Streamable HTTP client transport", () => {
  it("POSTs each message with the configured headers, keeps the session id and protocol version, reads JSON and event-stream answers in order", async () => {
    const { seen, fetch } = server([
      Response.json({ jsonrpc: "2.0", id: 1, result: { ok: 1 } }, { headers: { "mcp-session-id": "s-1" } }),
      new Response(null, { status: 202 }),
      sse({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } }, { jsonrpc: "2.0", id: 2, result: { ok: 2 } }),
    ]);
    const t = new HttpTransport(new URL("https://mcp.example.com/mcp"), fetch, { authorization: "Bearer secret" });
    const got: JSONRPCMessage[] = [];
    t.onmessage = (m) => got.push(m);
    await t.start();
    await t.send(request(1, "initialize"));
    expect(t.sessionId).toBe("s-1");
    t.setProtocolVersion("2025-11-25");
    await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await t.send(request(2, "tools/list"));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([
      { jsonrpc: "2.0", id: 1, result: { ok: 1 } },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } },
      { jsonrpc: "2.0", id: 2, result: { ok: 2 } },
    ]);
    expect(seen.map((s) => s.method)).toEqual(["POST", "POST", "POST"]);
    expect(seen[0]!.headers).toMatchObject({
      authorization: "Bearer secret",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    });
    expect(seen[0]!.headers["mcp-session-id"]).toBeUndefined();
    expect(seen[2]!.headers).toMatchObject({ "mcp-session-id": "s-1", "mcp-protocol-version": "2025-11-25", authorization: "Bearer secret" });
  });

  it("ends the session with DELETE (405: the server keeps none); a refused POST or an unknown content type is an error, reported and thrown", async () => {
    const { seen, fetch } = server([
      Response.json({ jsonrpc: "2.0", id: 1, result: {} }, { headers: { "mcp-session-id": "s-2" } }),
      new Response(null, { status: 405 }),
      new Response("no such session", { status: 404 }),
      new Response("hello", { headers: { "content-type": "text/plain" } }),
    ]);
    const t = new HttpTransport(new URL("https://mcp.example.com/mcp"), fetch, {});
    const errors: string[] = [];
    t.onerror = (e) => errors.push(e.message);
    await t.send(request(1, "initialize"));
    await t.terminateSession();
    expect(seen[1]).toMatchObject({ method: "DELETE", headers: { "mcp-session-id": "s-2" } });
    expect(t.sessionId).toBeUndefined();
    await expect(t.send(request(2, "tools/list"))).rejects.toThrow(/HTTP 404\): no such session/);
    await expect(t.send(request(3, "tools/list"))).rejects.toThrow(/Unexpected content type: text\/plain/);
    expect(errors).toHaveLength(2);
  });
});
