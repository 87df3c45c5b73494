import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { ScriptedTurn } from "./turns";

interface Script {
  replies: ScriptedTurn[];
  /** Loaded with `?refuse_stream=1`: every `stream: true` request gets a 400 naming `param: "stream"`, as some compatible servers answer. */
  refuseStream: boolean;
  requests: unknown[];
  authorizations: Array<string | null>;
  headers: Array<Record<string, string | string[] | undefined>>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

/**
 * `edgework/testing/model-server` (Node: start it in vitest's globalSetup and hand its
 * port to the Workers pool; in the Workers pool, `modelServer(url)` of `edgework/testing` drives it).
 * A scripted OpenAI-compatible server on 127.0.0.1, for tests and the offline demo.
 * A test loads a script with `PUT /scripts/<id>` (a list of replies), points a model
 * at `/scripts/<id>/v1` — or at `/v1`, where the request's model name picks the
 * script — and reads back what was asked with `GET /scripts/<id>`
 * (with each request's Authorization header, `null` when none was sent, and all its headers).
 * `POST /effects/<id>` counts side effects outside any run; `GET` reads the count (`GET /effects/<id>/bodies`: the bodies posted, in order).
 * A reply is a ScriptedTurn (turns.ts).
 * A request with `stream: true` gets the reply as server-sent chunks: the text in
 * `chunks` (else in one piece); with `gate`, only the first chunk is sent until
 * `POST /gates/<gate>` opens it, so a test sees a partial answer deterministically;
 * with `chunk_delay_ms`, each chunk follows the one before by that long (a model writing).
 * With `delay_ms`, a reply is sent that long after the request came (a slow model).
 * A script loaded with `PUT /scripts/<id>?refuse_stream=1` plays a server that cannot
 * stream: a `stream: true` request is answered `400` with `param: "stream"` (and counted
 * among the requests), taking no reply; the same request without streaming gets the next one.
 */
export async function startModelServer(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const scripts = new Map<string, Script>();
  const effects = new Map<string, string[]>();
  const gates = new Map<string, { open: Promise<void>; release(): void }>();
  const gate = (name: string) => {
    let g = gates.get(name);
    if (!g) {
      let release!: () => void;
      const open = new Promise<void>((r) => (release = r));
      gates.set(name, (g = { open, release }));
    }
    return g;
  };
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const body = await readBody(req);
    const effect = /^\/effects\/([^/?]+)(\/bodies)?$/.exec(req.url ?? "");
    if (effect) {
      const bodies = effects.get(effect[1]!) ?? [];
      if (req.method === "POST" && !effect[2]) bodies.push(body);
      effects.set(effect[1]!, bodies);
      return send(200, effect[2] ? { id: effect[1], bodies } : { id: effect[1], count: bodies.length });
    }
    const opened = /^\/gates\/([^/?]+)$/.exec(req.url ?? "");
    if (opened && req.method === "POST") {
      gate(opened[1]!).release();
      return send(200, { opened: opened[1] });
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const byModel = url.pathname === "/v1/chat/completions" && req.method === "POST" ? (JSON.parse(body).model as string) : undefined;
    const m = byModel ? [url.pathname, byModel, "/v1/chat/completions"] : /^\/scripts\/([^/]+)(\/v1\/chat\/completions)?$/.exec(url.pathname);
    if (!m) return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
    const id = m[1]!;
    if (!m[2] && req.method === "PUT") {
      const refuseStream = url.searchParams.get("refuse_stream") === "1";
      scripts.set(id, { replies: JSON.parse(body), refuseStream, requests: [], authorizations: [], headers: [] });
      return send(200, { ok: true });
    }
    const script = scripts.get(id);
    if (!script) return send(404, { error: { message: `no script ${id}` } });
    if (!m[2])
      return send(200, { requests: script.requests, authorizations: script.authorizations, headers: script.headers, remaining: script.replies.length });

    script.requests.push(JSON.parse(body));
    script.authorizations.push(req.headers.authorization ?? null);
    script.headers.push(req.headers);
    const streamed = JSON.parse(body).stream === true;
    if (streamed && script.refuseStream)
      return send(400, { error: { message: "Streaming is not supported by this server", type: "invalid_request_error", param: "stream", code: null } });
    const reply = script.replies.shift();
    if (!reply) return send(500, { error: { message: `script ${id} has no reply left for request ${script.requests.length}` } });
    if ("delay_ms" in reply && reply.delay_ms) await new Promise((r) => setTimeout(r, reply.delay_ms));
    if ("status" in reply) return send(reply.status, reply.body ?? { error: { message: `scripted ${reply.status}` } }, reply.headers);
    const n = script.requests.length;
    const toolCalls = (reply.tool_calls ?? []).map((c, i) => ({
      id: c.id ?? `call_${n}_${i + 1}`,
      type: "function",
      function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (streamed) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (delta: unknown, extra: Record<string, unknown> = {}) =>
        res.write(
          `data: ${JSON.stringify({ id: `chatcmpl-${id}-${n}`, object: "chat.completion.chunk", created: 0, model: "fake", choices: delta ? [{ index: 0, delta, finish_reason: null }] : [], ...extra })}\n\n`,
        );
      const pieces = reply.chunks ?? (reply.text !== undefined ? [reply.text] : []);
      for (const [i, piece] of pieces.entries()) {
        chunk(i === 0 ? { role: "assistant", content: piece } : { content: piece });
        if (i === 0 && reply.gate) await gate(reply.gate).open;
        if (reply.chunk_delay_ms && i < pieces.length - 1) await new Promise((r) => setTimeout(r, reply.chunk_delay_ms));
      }
      toolCalls.forEach((c, index) => {
        chunk({ tool_calls: [{ index, ...c }] });
      });
      chunk(null, { usage });
      res.end("data: [DONE]\n\n");
      return;
    }
    send(200, {
      id: `chatcmpl-${id}-${n}`,
      object: "chat.completion",
      created: 0,
      model: "fake",
      choices: [
        {
          index: 0,
          finish_reason: reply.tool_calls?.length ? "tool_calls" : "stop",
          message: {
            role: "assistant",
            content: reply.text ?? null,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          },
        },
      ],
      usage,
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
