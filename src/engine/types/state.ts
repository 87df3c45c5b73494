/** Where durable state lives: one call, one run, or every run (global). */
export type Scope = "call" | "run" | "global";

/** Durable key-value state of one toolset instance's scope (see `StateBackend`). */
export interface StateKV {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Entries whose key starts with `prefix`, sorted by key. */
  list(prefix?: string): Promise<Array<[string, unknown]>>;
}

/**
 * Durable state by scope: `call` (scope id = run id + call path), `run` (run id),
 * `global`. Memory implementation for the engine, SQLite in the Durable Objects.
 */
export interface StateBackend {
  open(scope: Scope, scopeId: string, namespace: string): StateKV;
  /** Deletes a scope's state; with `prefix`, every scope id starting with `scopeId`. */
  clear(scope: Scope, scopeId: string, opts?: { prefix?: boolean }): Promise<void>;
}
