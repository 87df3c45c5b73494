import type { JournalStore } from "./store";

export class MemoryJournalStore implements JournalStore {
  readonly entries = new Map<string, unknown>();

  load(): Map<string, unknown> {
    // A copy that round-trips through JSON, as a real store would: replay must not
    // depend on sharing object identity with the run that recorded it.
    return new Map([...this.entries].map(([k, v]) => [k, JSON.parse(JSON.stringify(v))]));
  }

  put(key: string, value: unknown): void {
    this.entries.set(key, JSON.parse(JSON.stringify(value ?? null)));
  }
}
