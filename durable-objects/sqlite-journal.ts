import { JournalKeyTaken, StorageError, type JournalStore } from "../src/engine";
import { keyWriter, type KeyGrammar } from "../src/engine/journal/keys";
import { keyGrammarOf } from "./schema";
import type { JournalRow } from "./rows";
import { json, parse, type Sql } from "./sql";

/** SQLite result codes that a retry of the same write would meet again. */
export const PERMANENT = /SQLITE_TOOBIG|SQLITE_FULL/;

/**
 * The run's journal: loaded with one query per activation, one row written per step.
 *
 * Its key is unique, held here rather than by a UNIQUE index (which would write a
 * second row per step): every write of the object goes through this one store, which
 * knows every key the table holds (read with the journal at each activation, or once
 * when the host writes first). Which side writes which key (keys.ts `keyWriter`) is
 * checked too: the engine writes its steps (`put`), the host what people and the world
 * decide while a run waits (`record`).
 */
export class SqliteJournalStore implements JournalStore {
  /** Every key the table holds, once read; kept up to date by every write of this object. */
  private keys?: Set<string>;
  /** The journal's key grammar (schema.ts `keyGrammarOf`), once read. */
  private grammar?: KeyGrammar;
  /** A fork's copied steps (fork.ts marks the last one's seq): what the source recorded, under its definitions. */
  private copied?: Set<string>;

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  load(): Map<string, unknown> {
    const rows = this.sql.all<Pick<JournalRow, "seq" | "key" | "value">>`SELECT seq, key, value FROM journal ORDER BY seq`;
    const steps = new Map(rows.map((r) => [r.key, parse(r.value)]));
    this.keys = new Set(steps.keys());
    const until = rows.length ? forkedUntil(this.sql) : 0;
    this.copied = until ? new Set(rows.filter((r) => r.seq <= until).map((r) => r.key)) : undefined;
    return steps;
  }

  /** The keys the table holds now (read, not remembered: a cancel decides on them). */
  recordedKeys(): string[] {
    return this.sql.all<Pick<JournalRow, "key">>`SELECT key FROM journal`.map((r) => r.key);
  }

  /** Whether `key` was copied from a fork's source: recorded there, maybe for another request than this run's definitions make. */
  inherited(key: string): boolean {
    return this.copied?.has(key) ?? false;
  }

  /**
   * The engine's step. `text`: the JSON the journal made to check the step's size, written as is (made here only when absent).
   * `startedAt`: when the step began, kept in its row (the timeline's start; `at` is its end): no row of its own.
   * A key that holds a step already is refused (`JournalKeyTaken`, with that step's value).
   */
  put(key: string, value: unknown, text: string = json(value), startedAt?: number): void {
    // Not in grammar 1, whose keys hold names as they came (a step named ".../wait:1" ends like a wait's key).
    if (keyWriter(key) === "host" && (this.grammar ??= keyGrammarOf(this.sql)) !== 1)
      throw new StorageError(`the engine may not write journal key ${key}: the run's host records it`, true);
    this.insert(key, text, startedAt);
  }

  /** The host's step: a decision, a wait's end, a conversation's message. A key that holds a step already is refused (`JournalKeyTaken`). */
  record(key: string, value: unknown): void {
    if (keyWriter(key) === "engine") throw new Error(`the run's host may not write journal key ${key}: the engine records it`);
    this.insert(key, json(value));
  }

  /** Rows were written past this store (a fork's copy): it reads the keys again when next it needs them. */
  forget(): void {
    this.keys = undefined;
    this.grammar = undefined;
  }

  private insert(key: string, text: string, startedAt?: number): void {
    this.keys ??= new Set(this.sql.all<Pick<JournalRow, "key">>`SELECT key FROM journal`.map((r) => r.key));
    if (this.keys.has(key)) {
      // Looked up (a walk of the table: only for a key known taken) rather than trusted: a transaction that rolled back may have taken the row back.
      const taken = this.sql.one<Pick<JournalRow, "value">>`SELECT value FROM journal WHERE key = ${key} ORDER BY seq LIMIT 1`;
      if (taken) throw new JournalKeyTaken(key, parse(taken.value));
    }
    try {
      this.sql.run`INSERT INTO journal (key, value, at, started_at) VALUES (${key}, ${text}, ${this.now()}, ${startedAt ?? null})`;
    } catch (err) {
      // SQLite's reason without the statement: the message ends up in the run's error.
      const reason = (err as Error).message.split("\n")[0]!.replace(/^SQL failed: /, "");
      throw new StorageError(`the journal could not record step ${key} (${text.length} characters): ${reason}`, PERMANENT.test(reason), { cause: err });
    }
    this.keys.add(key);
  }
}

/** Marks the steps a fork copied into this journal (all of it, so far): each then replays as recorded (`inherited`). */
export function markForkCopy(sql: Sql): void {
  sql.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('forked_until', (SELECT CAST(coalesce(max(seq), 0) AS TEXT) FROM journal))`;
}

/** The seq of the last step a fork copied into this journal, 0 for a run that is no fork. */
const forkedUntil = (sql: Sql) => Number(sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'forked_until'`?.value ?? 0);
