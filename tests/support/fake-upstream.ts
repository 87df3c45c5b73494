import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Upstreams for the `http` kind's tests: one handler on two ports of 127.0.0.1,
 * so a redirect from one to the other changes origin. Every route sits under a
 * test's own `/<id>/`; `GET /log/<id>` reads what that test's requests did.
 * - `/<id>/echo` answers with the request (method, headers, body);
 * - `/<id>/redirect/<status>?to=<url>` redirects there;
 * - `/<id>/loop/<n>` redirects to `/<id>/loop/<n+1>` forever;
 * - `/<id>/huge` streams 128 MiB, `/<id>/endless` never ends; both log the bytes
 *   sent and whether the client hung up before the end;
 * - `/<id>/stall` sends headers and one chunk, then nothing, until the client hangs up;
 * - `/<id>/slow/<ms>` answers its path after `ms` (headers included: a slow upstream);
 * - `/<id>/flaky/<n>?status=503[&retry_after=<text>]` answers `status` (with that Retry-After)
 *   to the test's first n requests, then as `echo` does (a transient failure, for retries).
 * The log also counts the test's requests waiting for their response headers: at most
 * how many at once (`maxWaiting`), and the order of arrivals and answers (`order`).
 */
interface Seen {
  port: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
interface Stream {
  sent: number;
  finished: boolean;
  closedEarly: boolean;
}

const HUGE = 128 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "a");

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

/** Writes CHUNKs with back-pressure until `total` bytes (or forever) or the client hangs up. */
function stream(res: ServerResponse, total: number | undefined, log: Stream) {
  res.writeHead(200, { "content-type": "text/plain", ...(total === undefined ? {} : { "content-length": String(total) }) });
  res.on("close", () => (log.closedEarly = !log.finished));
  const pump = () => {
    while (!res.destroyed) {
      if (total !== undefined && log.sent >= total) {
        log.finished = true;
        return void res.end();
      }
      log.sent += CHUNK.length;
      if (!res.write(CHUNK)) return void res.once("drain", pump);
    }
  };
  pump();
}

export async function startFakeUpstream(): Promise<{ ports: [number, number]; close(): Promise<void> }> {
  const requests = new Map<string, Seen[]>();
  const streams = new Map<string, Stream[]>();
  const waiting = new Map<string, { now: number; max: number; order: string[] }>();
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const [, id = "", route = "", arg = ""] = url.pathname.split("/");
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (id === "log") {
      const w = waiting.get(route);
      return json(200, { requests: requests.get(route) ?? [], streams: streams.get(route) ?? [], maxWaiting: w?.max ?? 0, order: w?.order ?? [] });
    }
    // Waiting from arrival until the response's headers go out.
    const w = waiting.get(id) ?? { now: 0, max: 0, order: [] };
    waiting.set(id, w);
    w.max = Math.max(w.max, ++w.now);
    w.order.push(`arrived ${url.pathname}`);
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      w.now--;
      w.order.push(`answered ${url.pathname}`);
      return writeHead(...args);
    }) as typeof res.writeHead;
    const seen: Seen = { port: req.socket.localPort!, method: req.method!, path: url.pathname, headers: req.headers, body: await readBody(req) };
    requests.set(id, [...(requests.get(id) ?? []), seen]);
    if (route === "echo") return json(200, seen);
    if (route === "redirect") return json(Number(arg), {}, { location: url.searchParams.get("to") ?? "/" });
    if (route === "loop") return json(302, {}, { location: `/${id}/loop/${Number(arg) + 1}` });
    if (route === "huge" || route === "endless") {
      const log: Stream = { sent: 0, finished: false, closedEarly: false };
      streams.set(id, [...(streams.get(id) ?? []), log]);
      return stream(res, route === "huge" ? HUGE : undefined, log);
    }
    if (route === "flaky") {
      if (requests.get(id)!.length > Number(arg)) return json(200, seen);
      const retryAfter = url.searchParams.get("retry_after");
      return json(Number(url.searchParams.get("status") ?? 503), { error: "try again" }, retryAfter === null ? {} : { "retry-after": retryAfter });
    }
    if (route === "slow") {
      await new Promise((r) => setTimeout(r, Number(arg)));
      return json(200, { path: url.pathname });
    }
    if (route === "stall") {
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.write("first bytes");
    }
    json(404, { error: `no route ${url.pathname}` });
  };
  const servers = [createServer(handler), createServer(handler)];
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
  return {
    ports: servers.map((s) => (s.address() as AddressInfo).port) as [number, number],
    close: async () => {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
