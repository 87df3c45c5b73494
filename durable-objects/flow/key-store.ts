/**
 * The storage of one flow key's object (flow-key.ts): its line, its ledger, its runs in
 * progress and its debounce batch, each a small table, and two KV rows (the key itself;
 * the rate's `tat`). No secondary index: the line and the batch are bounded (MAX_LINE,
 * MAX_BATCH), so reading them whole costs at most that many rows; the ledger is read by
 * its key. Every method is synchronous: the object calls them between its awaits.
 *
 * - `line`: deliveries not acted on yet, in order (seq). `members`: a debounced start's
 *   deliveries (null: just `id`), apart from its input so finding a delivery reads no
 *   input. `decided`: what the key decided for the head, written before it acts, so an
 *   act cut off is finished the same way.
 * - `ledger`: each delivery's outcome by its id, kept LEDGER_MS: a redelivery answers as the first.
 * - `slots`: the key's runs in progress, oldest first (`seq`).
 * - `batch`: a debounce's deliveries so far (the run takes the last, or all of them).
 */

import type { Attributes } from "../../src/engine/attributes";
import type { Decision } from "../../src/triggers/flow/decide";
import type { KeyValue } from "../../src/triggers/flow/key";
import type { FlowOutcome } from "../../src/triggers/flow/outcome";
import { json, parse, type JsonText, type Sql } from "../sql";

/** How long a delivery's outcome is kept: a redelivery within this answers as the first did. */
export const LEDGER_MS = 7 * 86_400_000;

const TABLES = [
  `CREATE TABLE IF NOT EXISTS line (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, members TEXT, item TEXT NOT NULL, bytes INTEGER NOT NULL, decided TEXT)`,
  `CREATE TABLE IF NOT EXISTS ledger (id TEXT PRIMARY KEY, outcome TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS slots (run TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS batch (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, item TEXT NOT NULL, bytes INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID`,
];

/** A delivery as the key keeps it until it is acted on. */
export interface Item {
  /** Its delivery id (for a debounced start: the last delivery's). */
  id: string;
  /** The run it starts, if it starts one (runIdFor its id). */
  run: string;
  /** Its id as a message or an event to the key's run (an event id's characters, whatever its delivery id holds). */
  eventId: string;
  input: unknown;
  /** What started the run, for its `trigger` field. */
  record: Record<string, unknown>;
  /** The run's attributes (for a debounced start: the last delivery's). */
  attributes?: Attributes;
  /** A debounced start: every delivery it stands for (each gets its outcome). */
  members?: string[];
}

export interface LineRow {
  seq: number;
  id: string;
  members: JsonText<string[]> | null;
  item: JsonText<Item>;
  bytes: number;
  decided: JsonText<Decision> | null;
}

export interface BatchRow {
  id: string;
  seq: number;
  item: JsonText<Item>;
  bytes: number;
  at: number;
}

/** What the object remembers of its key: the trigger and values, and its own name (for the runs it starts to tell it). */
export interface KeyMeta {
  trigger: string;
  key: KeyValue[];
  name: string;
}

export class KeyStore {
  private made = false;

  constructor(
    private readonly sql: Sql,
    private readonly kv: SyncKvStorage,
  ) {}

  /** The tables, once per instance (8 rows written in a new object, none after). */
  make(): void {
    if (this.made) return;
    for (const t of TABLES) this.sql.script(t);
    this.made = true;
  }

  meta(): KeyMeta | undefined {
    return this.kv.get<KeyMeta>("meta");
  }

  remember(meta: KeyMeta): void {
    if (!this.kv.get("meta")) this.kv.put("meta", meta);
  }

  tat(): number | undefined {
    return this.kv.get<number>("tat");
  }

  setTat(tat: number): void {
    this.kv.put("tat", tat);
  }

  // ——— the line ———

  head(): LineRow | undefined {
    return this.sql.one<LineRow>`SELECT * FROM line ORDER BY seq LIMIT 1`;
  }

  /** The delivery ids in the line, in order (its rows are few: MAX_LINE). */
  lineIds(): string[] {
    return this.sql.all<Pick<LineRow, "id" | "members">>`SELECT id, members FROM line ORDER BY seq`.flatMap((r) => (r.members ? parse(r.members) : [r.id]));
  }

  lineSize(): { n: number; bytes: number } {
    return this.sql.one<{ n: number; bytes: number }>`SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM line`!;
  }

  enqueue(item: Item, bytes: number): void {
    this.sql.run`INSERT INTO line (id, members, item, bytes) VALUES (${item.id}, ${item.members ? json(item.members) : null}, ${json(item)}, ${bytes})`;
  }

  setDecided(seq: number, d: Decision): void {
    this.sql.run`UPDATE line SET decided = ${json(d)} WHERE seq = ${seq}`;
  }

  /** The head is done: its row goes, and each delivery it stands for gets `outcome` in the ledger. */
  finish(head: LineRow, outcome: FlowOutcome, now: number): void {
    this.sql.run`DELETE FROM line WHERE seq = ${head.seq}`;
    for (const id of head.members ? parse(head.members) : [head.id]) this.record(id, outcome, now);
  }

  // ——— the ledger ———

  record(id: string, outcome: FlowOutcome, now: number): void {
    this.sql.run`INSERT INTO ledger (id, outcome, at) VALUES (${id}, ${json(outcome)}, ${now}) ON CONFLICT (id) DO UPDATE SET outcome = excluded.outcome`;
  }

  outcome(id: string): FlowOutcome | undefined {
    const row = this.sql.one<{ outcome: JsonText<FlowOutcome> }>`SELECT outcome FROM ledger WHERE id = ${id}`;
    return row ? parse(row.outcome) : undefined;
  }

  /** Forgets outcomes older than LEDGER_MS; when the next one is due to go (null: none kept). */
  prune(now: number): number | null {
    this.sql.run`DELETE FROM ledger WHERE at < ${now - LEDGER_MS}`;
    const oldest = this.sql.one<{ at: number | null }>`SELECT min(at) AS at FROM ledger`!.at;
    return oldest === null ? null : oldest + LEDGER_MS;
  }

  // ——— the key's runs ———

  /** Runs in progress, oldest first. */
  active(): string[] {
    return this.sql.all<{ run: string }>`SELECT run FROM slots ORDER BY seq`.map((r) => r.run);
  }

  addSlot(run: string): void {
    this.sql.run`INSERT INTO slots (run, seq) VALUES (${run}, (SELECT coalesce(max(seq), 0) + 1 FROM slots)) ON CONFLICT (run) DO NOTHING`;
  }

  removeSlot(run: string): void {
    this.sql.run`DELETE FROM slots WHERE run = ${run}`;
  }

  // ——— the debounce batch ———

  batch(): BatchRow[] {
    return this.sql.all<BatchRow>`SELECT * FROM batch ORDER BY seq`;
  }

  inBatch(id: string): BatchRow | undefined {
    return this.sql.one<BatchRow>`SELECT * FROM batch WHERE id = ${id}`;
  }

  addToBatch(item: Item, bytes: number, now: number): void {
    this.sql
      .run`INSERT INTO batch (id, seq, item, bytes, at) VALUES (${item.id}, (SELECT coalesce(max(seq), 0) + 1 FROM batch), ${json(item)}, ${bytes}, ${now})`;
  }

  clearBatch(): void {
    this.sql.run`DELETE FROM batch`;
  }

  /** Nothing left to remember: no delivery waiting, no run in progress, no outcome kept. */
  empty(): boolean {
    return !this.sql.one`SELECT 1 AS any FROM line UNION ALL SELECT 1 FROM slots UNION ALL SELECT 1 FROM batch UNION ALL SELECT 1 FROM ledger LIMIT 1`;
  }
}
