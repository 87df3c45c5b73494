import { sleep } from "./abort";
import { ConnectionError, EdgeworkError } from "./errors";
import { EventCursor } from "./event-cursor";
import { ENDING_EVENTS, type RunEvent, toRunEvent } from "./event-types";
import { backoffMs } from "./retry";
import { readSse, SseLimitError, type SseLimits } from "./sse";
import type { Transport } from "./transport";
import { type Run, TERMINAL_STATUSES } from "./types";

export interface RunEventsOptions {
  /** Start after this event (an earlier event's `id`); default: from the run's first event. */
  lastEventId?: string;
  /** Add `model_delta` events: the model's text as it streams (not persisted, no id). */
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
 * A run's events, across reconnections. The server ends each response after
 * `SSE_MAX_MS` (and when the run has ended and everything is sent); the iterator
 * reconnects with `Last-Event-ID` (event-cursor.ts) so no event is repeated or missed, and ends
 * after the run's ending event (`run_succeeded`, `run_failed`, `run_cancelled`).
 * A response that ends with nothing new is told apart from the end by asking
 * for the run's status. Errors of the request itself (404, 401…) are thrown.
 */
export async function* runEvents(transport: Transport, runId: string, options: RunEventsOptions = {}): AsyncGenerator<RunEvent> {
  const path = `/runs/${encodeURIComponent(runId)}`;
  const maxReconnects = options.maxReconnects ?? 5;
  const cursor = new EventCursor(options.lastEventId);
  let failures = 0;
  for (;;) {
    const opened = Date.now();
    let delivered = 0;
    let ended = false;
    let broke: EdgeworkError | undefined;
    try {
      const lastId = cursor.connect();
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
        const id = message.event === "model_delta" ? null : message.id;
        if (!cursor.admit(id)) continue;
        const event = toRunEvent(message.event, id, parseData(message.data, path));
        delivered++;
        ended ||= ENDING_EVENTS.has(event.type);
        yield event;
      }
    } catch (err) {
      broke = reconnectable(err, options.signal);
    }
    if (ended) return;
    const healthy = delivered > 0 || (!broke && Date.now() - opened >= HEALTHY_CONNECTION_MS);
    // Ended at once with nothing new: either the run is over and all was sent, or something cut it.
    if (!broke && !healthy && TERMINAL_STATUSES.includes((await transport.json<Run>({ method: "GET", path }, { signal: options.signal })).status)) return;
    failures = healthy ? 0 : failures + 1;
    if (failures > maxReconnects) {
      throw broke ?? new ConnectionError(`GET ${path}/events ended ${failures} times in a row without an event while the run was not over`);
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
