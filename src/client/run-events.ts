import { sleep } from "./abort";
import { ConnectionError, EdgeworkError } from "./errors";
import { END_EVENT, type RunEvent, toRunEvent } from "./event-types";
import { backoffMs } from "./retry";
import { readSse, SseLimitError, type SseLimits } from "./sse";
import type { Transport } from "./transport";

export interface RunEventsOptions {
  /** Start after this event (an earlier event's `id`); default: from the run's first event. */
  lastEventId?: string;
  /** Add `model_delta` events: the model's text as it streams (not persisted; their `id` is null). */
  deltas?: boolean;
  signal?: AbortSignal;
  /** Connections in a row that may fail or end with nothing before the iterator gives up (default 5). */
  maxReconnects?: number;
  /** Bounds of the event stream's lines and events (sse.ts). */
  limits?: SseLimits;
}

/** A connection that stayed open this long did its job, even without events (a paused run). */
const HEALTHY_CONNECTION_MS = 1_000;

/**
 * A run's events, across reconnections. Every event the server sends carries its
 * own id, so a reconnect with the last one as `Last-Event-ID` resumes exactly after
 * it: nothing repeated, nothing missed. The server ends each response after
 * `SSE_MAX_MS` (a dropped connection ends it too): the iterator reconnects; it ends
 * at the server's `end` event, sent once the run has ended and every event is out.
 * Errors of the request itself (404, 401…) are thrown.
 */
export async function* runEvents(transport: Transport, runId: string, options: RunEventsOptions = {}): AsyncGenerator<RunEvent> {
  const path = `/runs/${encodeURIComponent(runId)}`;
  const maxReconnects = options.maxReconnects ?? 5;
  let lastId = options.lastEventId;
  let failures = 0;
  for (;;) {
    const opened = Date.now();
    let delivered = 0;
    let broke: EdgeworkError | undefined;
    try {
      const res = await transport.open(
        {
          method: "GET",
          path: `${path}/events`,
          query: { deltas: options.deltas ? 1 : undefined },
          headers: { accept: "text/event-stream", ...(lastId ? { "last-event-id": lastId } : {}) },
        },
        { signal: options.signal, maxRetries: 0 },
      );
      if (!res.body) throw new ConnectionError(`GET ${path}/events answered without a body`);
      for await (const message of readSse(res.body, options.signal, options.limits)) {
        if (message.event === END_EVENT) return;
        lastId = message.id ?? lastId;
        delivered++;
        yield toRunEvent(message.event, message.event === "model_delta" ? null : message.id, parseData(message.data, path));
      }
    } catch (err) {
      broke = reconnectable(err, options.signal);
    }
    const healthy = delivered > 0 || (!broke && Date.now() - opened >= HEALTHY_CONNECTION_MS);
    failures = healthy ? 0 : failures + 1;
    if (failures > maxReconnects) {
      throw broke ?? new ConnectionError(`GET ${path}/events ended ${failures} times in a row without an event or its end`);
    }
    if (!healthy) await sleep(backoffMs(failures - 1), options.signal);
  }
}

/** A failure worth reconnecting after (no response, 5xx, 429, a stream broken off), as an EdgeworkError; anything else is thrown. */
function reconnectable(err: unknown, signal: AbortSignal | undefined): EdgeworkError {
  if (signal?.aborted) throw err;
  if (err instanceof SseLimitError) throw new EdgeworkError(err.message, { cause: err });
  if (err instanceof EdgeworkError) {
    if (err instanceof ConnectionError || err.status === 429 || (err.status ?? 0) >= 500) return err;
    throw err;
  }
  return new ConnectionError(`the event stream broke off: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

function parseData(data: string, path: string): unknown {
  try {
    return JSON.parse(data);
  } catch (err) {
    throw new EdgeworkError(`GET ${path}/events sent an event whose data is not JSON`, { cause: err });
  }
}
