/**
 * Where a run's journal lives. `load` reads every recorded step once per activation;
 * `put` records one step and must be durable when it resolves. `json`, when given,
 * is `value` as the JSON text the journal made to check its size: a store that
 * writes text can write it as is instead of making it again. `startedAt`: when the
 * step began executing (ms), for a store that keeps each step's duration (the run's
 * timeline); absent for a value recorded without executing (a decision).
 * Memory implementation for the engine; SQLite in the Run Durable Object.
 */
export interface JournalStore {
  load(): Map<string, unknown> | Promise<Map<string, unknown>>;
  put(key: string, value: unknown, json?: string, startedAt?: number): void | Promise<void>;
  /**
   * Whether the step under `key` (as last loaded) was copied from another run (a fork):
   * recorded under that run's definitions, so its model request's fingerprint is not
   * compared (a fork on the current definitions replays its prefix as it was recorded).
   */
  inherited?(key: string): boolean;
}

/** The part of a run's journal a toolset kind reads and writes (implemented by `Journal`, journal/journal.ts). */
export interface JournalSteps {
  get<T>(key: string): T | undefined;
  /** Runs `fn` once under `key`: later activations get the recorded value back. */
  step<T>(key: string, fn: () => T | Promise<T>): Promise<T>;
}
