import type { JournalStore } from "../types/journal";

export class MemoryJournalStore implements JournalStore {
  /**
   * Each step as the JSON text a real store writes: replay must not depend on
   * sharing object identity with the run that recorded it.
   */
  private readonly texts = new Map<string, string>();

  /** The recorded steps, parsed afresh (for tests to inspect). */
  get entries(): Map<string, unknown> {
    return this.load();
  }

  load(): Map<string, unknown> {
    return new Map([...this.texts].map(([k, text]) => [k, JSON.parse(text)]));
  }

  put(key: string, value: unknown, json: string = JSON.stringify(value ?? null)): void {
    this.texts.set(key, json);
  }
}
