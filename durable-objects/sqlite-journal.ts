import { StorageError, type JournalStore } from "../src/engine";
import type { JournalRow } from "./rows";
import { json, parse, type Sql } from "./sql";

/** SQLite result codes that a retry of the same write would meet again. */
export const PERMANENT = /SQLITE_TOOBIG|SQLITE_FULL/;

/** The run's journal: loaded with one query per activation, one row written per step. */
export class SqliteJournalStore implements JournalStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  load(): Map<string, unknown> {
    return new Map(this.sql.all<Pick<JournalRow, "key" | "value">>`SELECT key, value FROM journal ORDER BY seq`.map((r) => [r.key, parse(r.value)]));
  }

  /**
   * `text`: the JSON the journal made to check the step's size, written as is (made here only when absent).
   * `startedAt`: when the step began, kept in its row (the timeline's start; `at` is its end): no row of its own.
   */
  put(key: string, value: unknown, text: string = json(value), startedAt?: number): void {
    try {
      this.sql.run`INSERT INTO journal (key, value, at, started_at) VALUES (${key}, ${text}, ${this.now()}, ${startedAt ?? null})`;
    } catch (err) {
      // SQLite's reason without the statement: the message ends up in the run's error.
      const reason = (err as Error).message.split("\n")[0]!.replace(/^SQL failed: /, "");
      throw new StorageError(`the journal could not record step ${key} (${text.length} characters): ${reason}`, PERMANENT.test(reason), { cause: err });
    }
  }
}
