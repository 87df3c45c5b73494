import type { JournalStore } from "../src/engine";
import { json, parse, type Sql } from "./sql";

/** The run's journal: loaded with one query per activation, one row written per step. */
export class SqliteJournalStore implements JournalStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  load(): Map<string, unknown> {
    return new Map(this.sql.all`SELECT key, value FROM journal ORDER BY seq`.map((r) => [r.key as string, parse(r.value)]));
  }

  put(key: string, value: unknown): void {
    this.sql.run`INSERT INTO journal (key, value, at) VALUES (${key}, ${json(value)}, ${this.now()})`;
  }
}
