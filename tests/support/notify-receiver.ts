import { listenOnLoopback } from "./loopback-server";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A completion-webhook receiver on 127.0.0.1 for the notify tests: it keeps each request
 * to `POST /hook/<name>` as it came (raw body and headers, so a test can check the
 * signature as a receiver would), and answers what the test planned for that name.
 * - `PUT /plan/<name>` with a JSON list of answers: each request takes the next
 *   (`200`, `500`…, `"hang"`: never answered, `"redirect"`: 302 elsewhere, `"redirect-relative"`: 302 to `?moved`); the last one stays;
 * - `GET /hook/<name>` reads `{requests: [{headers, body}]}`.
 */
export async function startNotifyReceiver(): Promise<{ port: number; close: () => Promise<void> }> {
  const plans = new Map<string, Array<number | string>>();
  const kept = new Map<string, Array<{ headers: Record<string, unknown>; body: string }>>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const url = req.url ?? "";
    const plan = /^\/plan\/([\w-]+)$/.exec(url);
    if (req.method === "PUT" && plan) {
      plans.set(plan[1]!, JSON.parse(body) as Array<number | string>);
      res.writeHead(200);
      return res.end();
    }
    const hook = /^\/hook\/([\w-]+)/.exec(url);
    if (!hook) {
      res.writeHead(404);
      return res.end();
    }
    const name = hook[1]!;
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ requests: kept.get(name) ?? [] }));
    }
    kept.set(name, [...(kept.get(name) ?? []), { headers: req.headers, body }]);
    const answers = plans.get(name) ?? [200];
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (answer === "hang") return; // never answered: the sender's timeout ends it
    if (answer === "redirect-relative") {
      res.writeHead(302, { location: "?moved" }); // resolved against the request's own URL, path and all
      return res.end();
    }
    if (answer === "redirect") {
      res.writeHead(302, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/${name}-redirected` });
      return res.end();
    }
    res.writeHead(Number(answer));
    res.end("answered by the test receiver");
  });
  return listenOnLoopback(server);
}
