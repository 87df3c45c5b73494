import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server as LowLevelServer } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { blowupSchema } from "./hostile-schemas";

const listening = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

async function freePort(): Promise<number> {
  const s = createServer();
  const port = await listening(s);
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * `@modelcontextprotocol/server-everything` in its Streamable HTTP mode on
 * 127.0.0.1 (its PORT variable picks the port; the preload keeps it off other interfaces).
 */
export async function startEverything(): Promise<{ port: number; child: ChildProcess; stop(): void }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["-r", "./tests/support/listen-loopback.cjs", "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp"],
    {
      env: { ...process.env, PORT: String(port) },
      stdio: "ignore",
    },
  );
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/mcp`).then(
      () => true,
      () => false,
    );
    if (up) return { port, child, stop: () => child.kill() };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error("server-everything did not start");
}

/**
 * A small MCP server of our own (stateless Streamable HTTP at /mcp) that counts
 * the calls it serves, so a test can prove one call reached it exactly once:
 * `read_notes` (readOnlyHint), `write_note` (no annotations: asks), and from
 * version 2 on `delete_notes`. `GET /control` reads counts and version,
 * `POST /control/version/<n>` switches the tool list, `POST /control/reset` clears.
 * `POST /control/kill-doomed` kills the extra server-everything given to it.
 * Hostile servers on the same port (requests counted as `hostile:<mode>`):
 * `/hostile/regex/mcp` (tool `match`, whose outputSchema's pattern `^(a+)+$`
 * backtracks on the `"aaa…a!"` it returns), `/hostile/blowup/mcp` (tool `deep`, an
 * outputSchema whose anyOf/$ref chain doubles 24 times), and `/hostile/redirect/mcp`
 * (every request redirected, 307, to `/hostile/redirected/mcp` on the same origin),
 * `/hostile/mismatch/mcp` and `/hostile/unstructured/mcp` (tool `count`, whose structured
 * content does not match its outputSchema, or is missing).
 */
export async function startCountingServer(doomed?: ChildProcess): Promise<{ port: number; close(): Promise<void> }> {
  let counts: Record<string, number> = {};
  let version = 1;
  const count = (tool: string) => (counts[tool] = (counts[tool] ?? 0) + 1);
  const mcpServer = () => {
    const s = new McpServer({ name: "counting", version: "1" });
    s.registerTool("read_notes", { description: "Read the notes", annotations: { readOnlyHint: true } }, async () => {
      count("read_notes");
      return { content: [{ type: "text", text: "no notes" }] };
    });
    s.registerTool("write_note", { description: "Write a note", inputSchema: { text: z.string() } }, async ({ text }) => {
      count("write_note");
      return { content: [{ type: "text", text: `wrote: ${text}` }] };
    });
    if (version >= 2) s.registerTool("delete_notes", { description: "Delete every note" }, async () => ({ content: [{ type: "text", text: "deleted" }] }));
    return s;
  };
  const send = (res: ServerResponse, body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  const server = createServer(async (req, res) => {
    const url = req.url ?? "";
    if (url === "/control") return send(res, { counts, version });
    if (url === "/control/reset" && req.method === "POST") return ((counts = {}), (version = 1), send(res, { ok: true }));
    const v = /^\/control\/version\/(\d+)$/.exec(url);
    if (v && req.method === "POST") return ((version = Number(v[1])), send(res, { version }));
    if (url === "/control/kill-doomed" && req.method === "POST") return (doomed?.kill(), send(res, { killed: !!doomed }));
    const hostile = /^\/hostile\/([a-z]+)\/mcp$/.exec(url);
    if (hostile) {
      const mode = hostile[1]!;
      count(`hostile:${mode}`);
      if (mode === "redirect") return res.writeHead(307, { location: "/hostile/redirected/mcp" }).end();
      if (!(mode in HOSTILE_TOOLS)) return res.writeHead(404).end();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const s = hostileServer(HOSTILE_TOOLS[mode as keyof typeof HOSTILE_TOOLS]);
      res.on("close", () => void transport.close().then(() => s.close()));
      await s.connect(transport);
      return transport.handleRequest(req, res);
    }
    if (url !== "/mcp") return res.writeHead(404).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const s = mcpServer();
    res.on("close", () => void transport.close().then(() => s.close()));
    await s.connect(transport);
    await transport.handleRequest(req, res);
  });
  const port = await listening(server);
  return { port, close: () => new Promise((r) => server.close(() => r())) };
}

/** Each hostile mode's one tool, as listed (raw JSON Schemas: the high-level server would run the regex itself). */
const HOSTILE_TOOLS = {
  regex: {
    tool: {
      name: "match",
      description: "Answers a string its output schema's pattern backtracks on",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] },
    },
    structured: { s: `${"a".repeat(40)}!` },
  },
  blowup: {
    tool: { name: "deep", description: "Has an output schema that expands 2^24 times", inputSchema: { type: "object" }, outputSchema: blowupSchema(24) },
    structured: { v: "x" },
  },
  mismatch: {
    tool: {
      name: "count",
      description: "Answers a string where its output schema says a number",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    },
    structured: { n: "seven" },
  },
  unstructured: {
    tool: {
      name: "count",
      description: "Has an output schema and answers no structured content",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { n: { type: "number" } } },
    },
    structured: undefined,
  },
} satisfies Record<string, { tool: Tool; structured: Record<string, unknown> | undefined }>;

function hostileServer({ tool, structured }: (typeof HOSTILE_TOOLS)[keyof typeof HOSTILE_TOOLS]): LowLevelServer {
  const s = new LowLevelServer({ name: "hostile", version: "1" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool as Tool] }));
  s.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: "text", text: "see structuredContent" }],
    ...(structured ? { structuredContent: structured } : {}),
  }));
  return s;
}
