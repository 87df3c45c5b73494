/** One of an invocation's connections, held from before a request is sent until its response headers arrive; `release` twice is once. */
export interface Connection {
  release(): void;
}

/** Where an invocation's requests take their turn for a connection (net/connection-slots.ts). */
export interface Connections {
  /** Resolves once a connection is free (first come, first served); rejects with `signal`'s reason when it aborts first. */
  acquire(signal?: AbortSignal): Promise<Connection>;
}
