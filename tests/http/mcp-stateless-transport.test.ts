import { PingRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { listDurableObjectIds } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/mcp/server";
import { MAX_BATCH, MAX_ID_CHARS, StatelessTransport } from "../../src/mcp/stateless-transport";
import { settle } from "../durable-objects/helpers";

const MCP_URL = "https://edgework.test/mcp";
const HEADERS = { authorization: `Bearer ${env.API_TOKEN}`, "content-type": "application/json", accept: "application/json, text/event-stream" };

const post = (body: unknown, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(MCP_URL, { method: "POST", headers: { ...HEADERS, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) }),
  );
const ping = (id: unknown) => ({ jsonrpc: "2.0", id, method: "ping" });
const rpcError = async (res: Response) => ((await res.json()) as { error: { code: number; message: string }; id: null }).error;

/** The `data:` of each event of an event-stream body, parsed. */
async function events(res: Response): Promise<Array<{ id?: unknown; method?: string; params?: { progress?: number }; result?: unknown }>> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((e) => e.includes("data: "))
    .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)));
}

describe("/mcp's transport: what a client may send", () => {
  it("a request is answered as JSON; a batch as a JSON array, one answer per request, notifications unanswered", async () => {
    const one = await post({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(one.status).toBe(200);
    expect(one.headers.get("content-type")).toMatch(/^application\/json/);
    const list = (await one.json()) as { id: number; result: { tools: Array<{ name: string }> } };
    expect(list.id).toBe(7);
    expect(list.result.tools.map((t) => t.name)).toContain("hook-echo");

    const batch = await post([ping("a"), { jsonrpc: "2.0", method: "notifications/initialized" }, ping(2)]);
    expect(batch.headers.get("content-type")).toMatch(/^application\/json/);
    const answers = (await batch.json()) as Array<{ id: unknown; result: unknown }>;
    expect(answers.map((a) => a.id).sort()).toEqual([2, "a"]);
    expect(answers.every((a) => JSON.stringify(a.result) === "{}")).toBe(true);
    // A batch of one is still a batch: an array.
    expect(await (await post([ping(1)])).json()).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  it("only notifications → 202 with no body", async () => {
    const res = await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  });

  it("a call that sends progress before its result is answered as an event stream: progress first, the result last", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "hook-echo", arguments: { kind: "slow" }, _meta: { progressToken: "p" } },
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const sent = await events(res);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.slice(0, -1).every((m) => m.method === "notifications/progress")).toBe(true);
    expect(sent.at(-1)).toMatchObject({ id: 1, result: { structuredContent: { status: expect.stringMatching(/^(queued|running)$/) } } });
    await settle((sent.at(-1)!.result as { structuredContent: { run_id: string } }).structuredContent.run_id);
  });

  it("GET and DELETE → 405 (no session, no stream of its own), allowing POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await exports.default.fetch(new Request(MCP_URL, { method, headers: { authorization: HEADERS.authorization, accept: "text/event-stream" } }));
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect((await rpcError(res)).message).toContain("no sessions");
    }
  });

  it("an Accept without both JSON and event streams → 406; a Content-Type that is not JSON → 415", async () => {
    for (const accept of ["application/json", "text/event-stream", "*/*", ""]) {
      const res = await post(ping(1), { accept });
      expect(res.status).toBe(406);
      expect((await rpcError(res)).message).toBe("Not Acceptable: Client must accept both application/json and text/event-stream");
    }
    for (const type of ["text/plain; a=application/json", "application/jsonx", ""]) {
      const res = await post(ping(1), { "content-type": type });
      expect(res.status).toBe(415);
    }
    expect((await post(ping(1), { "content-type": "Application/JSON; charset=utf-8" })).status).toBe(200);
  });

  it("an unsupported MCP-Protocol-Version → 400 naming the supported ones; a supported one is served", async () => {
    const res = await post(ping(1), { "mcp-protocol-version": `1999-01-01${"x".repeat(5000)}` });
    expect(res.status).toBe(400);
    const { message } = await rpcError(res);
    expect(message).toMatch(/^Bad Request: Unsupported protocol version: 1999-01-01x+ \(supported versions: 2025-11-25, /);
    expect(message.length).toBeLessThan(200);
    expect((await post(ping(1), { "mcp-protocol-version": "2025-06-18" })).status).toBe(200);
  });

  it("bad JSON → 400 parse error (-32700); what is JSON but no JSON-RPC message → 400 invalid request (-32600) naming the message", async () => {
    for (const body of ["{", "", "not json", '{"jsonrpc":"2.0","id":1,"method":"ping"'])
      expect(await rpcError(await post(body))).toEqual({ code: -32700, message: "Parse error: Invalid JSON" });
    for (const body of ["null", "42", '"ping"', '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"id":1,"method":"ping"}']) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await rpcError(res)).toMatchObject({ code: -32600, message: expect.stringContaining("the message is not a JSON-RPC 2.0") });
    }
    expect((await rpcError(await post([ping(1), { jsonrpc: "2.0", id: 2 }]))).message).toContain("message 1 is not");
  });

  it(`a batch of more than ${MAX_BATCH} messages, or of none, is refused before any is handled`, async () => {
    for (const n of [MAX_BATCH + 1, 5000]) {
      const res = await post(Array.from({ length: n }, (_, i) => ping(i)));
      expect(res.status).toBe(400);
      expect(await rpcError(res)).toEqual({ code: -32600, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages, not ${n}` });
    }
    expect((await rpcError(await post([]))).message).toContain("not 0");
    // A batch of calls would start runs: the refused one started none.
    const calls = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "hook-echo", arguments: { kind: "ping" } },
    }));
    const before = (await listDurableObjectIds(env.RUNS)).length;
    expect((await post(calls)).status).toBe(400);
    expect((await listDurableObjectIds(env.RUNS)).length).toBe(before);
  });

  it(`ids: past ${MAX_ID_CHARS} characters, not safe integers, or repeated in a batch → 400; a progress token as long → 400`, async () => {
    const long = "i".repeat(MAX_ID_CHARS + 1);
    expect(await rpcError(await post(ping(long)))).toEqual({
      code: -32600,
      message: `Invalid Request: the message has an id or progress token over ${MAX_ID_CHARS} characters`,
    });
    expect(await (await post(ping("i".repeat(MAX_ID_CHARS)))).json()).toMatchObject({ id: "i".repeat(MAX_ID_CHARS), result: {} });
    for (const id of ["1e400", String(2 ** 60), "1.5", "null", "{}"]) {
      const res = await post(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
      expect(res.status).toBe(400);
      expect((await rpcError(res)).code).toBe(-32600);
    }
    expect((await rpcError(await post([ping(1), ping("x"), ping(1)]))).message).toBe(
      "Invalid Request: message 2 repeats the id of another request in the batch",
    );
    const token = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "hook-echo", arguments: { kind: "ping" }, _meta: { progressToken: long } },
    });
    expect(token.status).toBe(400);
  });

  it("arguments nested 150,000 deep (under the body bound) are read and refused by the worker's input check, not by a crash", async () => {
    const deep = `${'{"a":'.repeat(150_000)}1${"}".repeat(150_000)}`;
    const res = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hook-echo","arguments":{"kind":${deep}}}}`);
    const answer = (await res.json()) as { id: number; result: { isError: boolean; content: Array<{ text: string }> } };
    expect(answer).toMatchObject({ id: 1, result: { isError: true } });
    expect(answer.result.content[0]!.text).toContain('input does not match the input schema of worker "hook-echo"');
  });

  it("a request for a method the server does not have is answered with its JSON-RPC error, as JSON", async () => {
    const res = await post({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 1, error: { code: -32601 } });
  });
});

describe("StatelessTransport", () => {
  /** A server whose `ping` waits for `open()`, sending progress first when `progress` is set; `started` and `aborted` settle when the handler starts and when its signal aborts. */
  function gated(progress = false) {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let started!: () => void;
    const start = new Promise<void>((r) => (started = r));
    let aborted!: () => void;
    const abort = new Promise<void>((r) => (aborted = r));
    const server = new McpServer({ name: "t", version: "1" }, {});
    server.setRequestHandler(PingRequestSchema, async (_req, extra) => {
      started();
      extra.signal.addEventListener("abort", () => aborted());
      if (progress) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: String(extra.requestId), progress: 1 } });
      await gate;
      return {};
    });
    return { server, open, start, abort };
  }
  const request = (body: unknown) => new Request(MCP_URL, { method: "POST", headers: HEADERS, body: JSON.stringify(body) });

  it("an answer slower than the keep-alive interval comes as an event stream that starts with a keep-alive comment", async () => {
    const { server, open } = gated();
    const transport = new StatelessTransport(1);
    await server.connect(transport);
    const res = await transport.handle(request(ping(1)));
    // The response exists while the handler still waits: the stream was opened by the keep-alive.
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe(": keepalive\n\n");
    open();
    let text = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
    expect(text.replaceAll(": keepalive\n\n", "")).toBe(`event: message\ndata: ${JSON.stringify({ result: {}, jsonrpc: "2.0", id: 1 })}\n\n`);
  });

  it("an answer held for JSON goes first on the stream another request of the batch opens with its progress", async () => {
    const { server, open } = gated(true);
    const transport = new StatelessTransport();
    await server.connect(transport);
    // The unknown method's error is answered at once (held for JSON), then the ping's progress opens the stream.
    const res = await transport.handle(request([ping("slow"), { jsonrpc: "2.0", id: "unknown", method: "no/such" }]));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    open();
    const sent = await events(res);
    expect(sent.map((m) => m.id ?? m.method)).toEqual(["unknown", "notifications/progress", "slow"]);
  });

  it("a client that goes away mid-stream aborts the handler's signal; nothing more is written", async () => {
    const { server, abort } = gated(true);
    const transport = new StatelessTransport();
    await server.connect(transport);
    const res = await transport.handle(request(ping(1)));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    await res.body!.cancel();
    await abort;
    await expect(transport.send({ jsonrpc: "2.0", id: 1, result: {} })).resolves.toBeUndefined();
  });

  it("a message for no open request of the POST is refused (there is no stream of the server's own)", async () => {
    const { server, open, start } = gated();
    const transport = new StatelessTransport();
    await server.connect(transport);
    const answered = transport.handle(request(ping(1)));
    await start;
    await expect(transport.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } })).rejects.toThrow(
      "no open request undefined of this POST",
    );
    await expect(transport.send({ jsonrpc: "2.0", id: 2, result: {} })).rejects.toThrow("no open request 2 of this POST");
    open();
    expect(await (await answered).json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });
});
