import type { JournalStore } from "./store";

/** May throw (e.g. `RunInterrupted`) to stop the run before a new step executes. */
export type BeforeStep = (key: string, journal: Journal) => void | Promise<void>;

/**
 * The run's memory of every effect that is not pure. `step(key, fn)` returns the
 * recorded value when the key is in the journal (replay), else runs `fn`, records
 * its result and returns it. Keys are deterministic call paths, so a replayed run
 * asks for the same keys in the same places.
 */
export class Journal {
  private readonly inFlight = new Set<string>();
  /** Steps executed (not replayed) in this activation. */
  executed = 0;

  private constructor(
    private readonly recorded: Map<string, unknown>,
    private readonly store: JournalStore,
    private readonly beforeStep?: BeforeStep,
  ) {}

  /** `beforeStep` runs before each step that is about to execute (not on replay). */
  static async open(store: JournalStore, beforeStep?: BeforeStep): Promise<Journal> {
    return new Journal(await store.load(), store, beforeStep);
  }

  /** Steps recorded so far. */
  get size(): number {
    return this.recorded.size;
  }

  entries(): IterableIterator<[string, unknown]> {
    return this.recorded.entries();
  }

  get<T>(key: string): T | undefined {
    return this.recorded.get(key) as T | undefined;
  }

  async step<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    if (this.recorded.has(key)) return this.recorded.get(key) as T;
    // Two live steps with one key would record one effect for two: an engine bug.
    if (this.inFlight.has(key)) throw new Error(`journal key used twice: ${key}`);
    this.inFlight.add(key);
    try {
      await this.beforeStep?.(key, this);
      const value = await fn();
      await this.record(key, value);
      this.executed++;
      return value;
    } finally {
      this.inFlight.delete(key);
    }
  }

  async record(key: string, value: unknown): Promise<void> {
    await this.store.put(key, value);
    this.recorded.set(key, value);
  }
}
