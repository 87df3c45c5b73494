import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { RunRpc } from "../runs";
import { httpError } from "./http-error";

/** A positive number var, or its default. */
const msVar = (value: unknown, fallback: number) => (Number(value) > 0 ? Number(value) : fallback);
/** How long one SSE response stays open before the client reconnects with Last-Event-ID (`SSE_MAX_MS`, default 60 s). */
const sseMaxMs = (env: Env) => msVar(env.SSE_MAX_MS, 60_000);
/** How long a stream stays silent before a comment line shows it is alive (`SSE_HEARTBEAT_MS`, default 15 s): proxies close idle connections. */
const sseHeartbeatMs = (env: Env) => msVar(env.SSE_HEARTBEAT_MS, 15_000);
const SSE_POLL_MS = 250;

/**
 * A run's events as server-sent events, from the cursor in Last-Event-ID (or
 * `?after=`). Every event of the run carries an `id:` of its own, its cursor, so a
 * reconnect resumes exactly after the last event received. When the run has ended
 * and every event is sent, an `end` event (no id, data `{}`) says so and the response ends; a response that ends
 * without it (SSE_MAX_MS, a dropped connection) is to be resumed. A silent stream
 * (a paused run) gets a `: heartbeat` comment every SSE_HEARTBEAT_MS. With `deltas`,
 * model text streaming right now is merged in as `model_delta` events: not persisted,
 * their id is the cursor of the last persisted event (a reconnect gets the pieces
 * still in flight again, and the recorded `turn` supersedes them).
 */
export async function runEventStream<E extends { Bindings: Env }>(c: Context<E>, stub: RunRpc, runId: string, opts: { deltas: boolean }): Promise<Response> {
  let cursor = c.req.header("Last-Event-ID") ?? c.req.query("after") ?? "0-0";
  const first = await stub.eventsSince(cursor);
  if (!first) throw httpError(404, { error: `unknown run "${runId}"` });
  const maxMs = sseMaxMs(c.env);
  const heartbeatMs = sseHeartbeatMs(c.env);
  let deltaCursor = 0;
  return streamSSE(c, async (stream) => {
    // A client that stops reading makes a write wait forever: every write and
    // wait races the deadline and the client going away, so the response ends.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const over = new Promise<"over">((resolve) => {
      timer = setTimeout(() => resolve("over"), maxMs);
      stream.onAbort(() => resolve("over"));
    });
    let wrote = Date.now();
    const sent = <T>(write: Promise<T>) => {
      wrote = Date.now();
      return Promise.race([write, over]);
    };
    const write = (event: string, data: unknown, id?: string) => sent(stream.writeSSE({ ...(id ? { id } : {}), event, data: JSON.stringify(data) }));
    try {
      let batch: typeof first | null = first;
      while (batch) {
        for (const ev of batch.events) {
          // A write still pending can only be undone by aborting: closing would wait for it.
          if ((await write(ev.type, ev.data, ev.id)) === "over") return stream.abort();
          cursor = ev.id;
        }
        if (batch.done) {
          if ((await write("end", {})) === "over") return stream.abort();
          return;
        }
        let streamed = 0;
        if (opts.deltas) {
          const { deltas, next } = await stub.deltasSince(deltaCursor);
          deltaCursor = next;
          for (const d of deltas) if ((await write("model_delta", { stream: d.stream, text: d.text }, cursor)) === "over") return stream.abort();
          streamed = deltas.length;
        }
        if (!batch.events.length && !streamed) {
          if (Date.now() - wrote >= heartbeatMs && (await sent(stream.write(": heartbeat\n\n"))) === "over") return stream.abort();
          if ((await Promise.race([stream.sleep(SSE_POLL_MS), over])) === "over") return;
        }
        batch = await stub.eventsSince(cursor);
      }
    } finally {
      clearTimeout(timer);
    }
  });
}
