/**
 * Cloudflare lets one invocation (a request, an alarm, a queue batch) have six
 * connections waiting for their response headers at once; a seventh waits until one
 * of them has its headers (its body may still be read: it no longer counts). Counted:
 * `fetch()`, KV, Cache, R2, Queue sends, sockets (developers.cloudflare.com/workers/platform/limits,
 * "Simultaneous open connections"). Local workerd does not enforce it.
 *
 * Our own outbound requests take their turn here instead, first come first served,
 * in production and locally alike: the platform never queues them out of our sight
 * (so a time limit can start when the request does), and a test that passes locally
 * met the same limit production has.
 */

import type { Connection, Connections } from "../types/connections";

export type { Connection, Connections };

export const MAX_CONNECTIONS = 6;
/** How long a request may wait for a connection before it fails (each of the six ahead has its own time limit). */
const DEFAULT_CONNECTION_WAIT_MS = 120_000;

/** A request waited longer than its bound for a connection. */
export class ConnectionWaitError extends Error {
  override readonly name = "ConnectionWaitError";
}

/** A fair line for `limit` connections: one per invocation (an activation, a queue batch). */
export class ConnectionSlots implements Connections {
  private open = 0;
  private readonly line: Array<{ granted: (c: Connection) => void; leave: (reason: unknown) => void }> = [];
  /** Why the invocation stopped asking (a cancel): every wait in line, and every later request, fails with it. */
  private closed: { reason: unknown } | undefined;

  constructor(
    readonly limit = MAX_CONNECTIONS,
    private readonly maxWaitMs = DEFAULT_CONNECTION_WAIT_MS,
  ) {}

  acquire(signal?: AbortSignal): Promise<Connection> {
    if (this.closed) return Promise.reject(this.closed.reason);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.open < this.limit && this.line.length === 0) {
      this.open++;
      return Promise.resolve(this.connection());
    }
    return new Promise((resolve, reject) => {
      const granted = (c: Connection) => {
        done();
        resolve(c);
      };
      const leave = (reason: unknown) => {
        const at = this.line.findIndex((w) => w.granted === granted);
        if (at >= 0) this.line.splice(at, 1);
        done();
        reject(reason);
      };
      const aborted = () => leave(signal!.reason);
      const timer = setTimeout(() => leave(this.waitedTooLong()), this.maxWaitMs);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
      };
      signal?.addEventListener("abort", aborted, { once: true });
      this.line.push({ granted, leave });
    });
  }

  /**
   * No request of this invocation is sent any more (a cancel answered): those waiting in
   * line fail with `reason` instead of going out once a connection frees, and so does
   * every later one. Requests already sent finish (in flight, they are the platform's).
   */
  close(reason: unknown): void {
    this.closed = { reason };
    for (const w of [...this.line]) w.leave(reason);
  }

  private waitedTooLong(): ConnectionWaitError {
    return new ConnectionWaitError(
      `no connection free within ${Math.round(this.maxWaitMs / 1000)} s: ${this.limit} requests were waiting for their response headers (Cloudflare allows ${this.limit} at once per invocation); make fewer requests in parallel, or give slow upstreams a shorter timeout_ms`,
    );
  }

  private connection(): Connection {
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        // Handed straight to the next in line, so nobody who came later can take it first.
        const next = this.line.shift();
        if (next) next.granted(this.connection());
        else this.open--;
      },
    };
  }
}

/** `connections` whose next acquire gets `held` (taken earlier, e.g. before claiming the work it is for). */
export function withHeld(connections: Connections, held: Connection): Connections {
  let spare: Connection | undefined = held;
  return {
    acquire(signal) {
      const c = spare;
      spare = undefined;
      return c ? Promise.resolve(c) : connections.acquire(signal);
    },
  };
}

/**
 * `fetch` through `connections`: each request holds a connection from before it is
 * sent until its response headers arrive or it fails, waiting its turn (its `signal`
 * ends the wait too). `first`: a connection held already, for the first request.
 */
export function connectedFetch(connections: Connections, first?: Connection, inner?: typeof fetch): typeof fetch {
  let lent = first;
  return async (input, init) => {
    const connection = lent ?? (await connections.acquire(init?.signal ?? undefined));
    lent = undefined;
    try {
      // Looked up per call, so a test's spy on the global fetch sees it.
      return await (inner ?? globalThis.fetch)(input, init);
    } finally {
      connection.release();
    }
  };
}

/**
 * Runs `request` once a connection is free, with a `fetch` whose first request uses
 * it: a time limit `request` sets counts from when the request could start, not from
 * its wait in line (which `connections` bounds on its own).
 */
export async function whenConnected<T>(connections: Connections, request: (fetch: typeof globalThis.fetch) => Promise<T>, inner?: typeof fetch): Promise<T> {
  const first = await connections.acquire();
  try {
    return await request(connectedFetch(connections, first, inner));
  } finally {
    first.release(); // unused (the request failed before sending): the next in line gets it
  }
}
