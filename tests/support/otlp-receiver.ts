import { listenOnLoopback } from "./loopback-server";
import { createServer } from "node:http";

/**
 * An OTLP/HTTP receiver on 127.0.0.1 for the tracing tests: what a collector would
 * get, kept per sink.
 * - `POST /sink/<name>/v1/traces` keeps the JSON body (and the request's headers) and answers 200;
 * - `POST /status/<code>/v1/traces` answers that status; `POST /slow/v1/traces` never answers;
 * - `GET /sink/<name>` reads `{requests: [{headers, body}]}`.
 */
export async function startOtlpReceiver(): Promise<{ port: number; close: () => Promise<void> }> {
  const sinks = new Map<string, Array<{ headers: Record<string, unknown>; body: unknown }>>();
  const server = createServer(async (req, res) => {
    const url = req.url ?? "";
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const read = /^\/sink\/([\w-]+)$/.exec(url);
    if (req.method === "GET" && read) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ requests: sinks.get(read[1]!) ?? [] }));
    }
    const sink = /^\/sink\/([\w-]+)\/v1\/traces$/.exec(url);
    if (req.method === "POST" && sink) {
      const list = sinks.get(sink[1]!) ?? [];
      list.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      sinks.set(sink[1]!, list);
      res.writeHead(200, { "content-type": "application/json" });
      return res.end("{}");
    }
    const status = /^\/status\/(\d{3})\/v1\/traces$/.exec(url);
    if (status) {
      res.writeHead(Number(status[1]));
      return res.end("refused by the test receiver");
    }
    if (url === "/slow/v1/traces") return; // never answers: the exporter's timeout ends it
    res.writeHead(404);
    res.end();
  });
  return listenOnLoopback(server);
}
