/**
 * Where a run's journal lives. `load` reads every recorded step once per activation;
 * `put` records one step and must be durable when it resolves.
 * Memory implementation for the engine; SQLite in the Run Durable Object.
 */
export interface JournalStore {
  load(): Map<string, unknown> | Promise<Map<string, unknown>>;
  put(key: string, value: unknown): void | Promise<void>;
}
