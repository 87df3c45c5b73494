import { JournalKeyTaken } from "../errors";
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

  /** As every store: a key holds one step (the first written). */
  put(key: string, value: unknown, json: string = JSON.stringify(value ?? null)): void {
    const taken = this.texts.get(key);
    if (taken !== undefined) throw new JournalKeyTaken(key, JSON.parse(taken));
    this.texts.set(key, json);
  }
}
