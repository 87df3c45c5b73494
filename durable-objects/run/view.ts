/**
 * What a run shows its watchers: the run view, its events and created workers.
 * Owns no table: reads `journal` and `events` (schema.ts), the pinned catalog and
 * the approvals. Needs from its host: the SQL, `row` and `keyGrammar`.
 */

import { callTree } from "../../src/engine/journal/call-tree";
import { journalUsage } from "../../src/engine/journal/run-usage";
import { findCreation, workerFileText } from "../../src/engine/run/created-workers";
import { TERMINAL, type Answer, type RunEvent, type RunView } from "../../src/runs/types";
import type { EventRow, JournalRow } from "../rows";
import { parse } from "../sql";
import type { SqliteJournalStore } from "../sqlite-journal";
import type { RunApprovals } from "./approvals";
import type { RunCatalog } from "./catalog";
import type { RunWaits } from "./waits";
import { mergeEvents } from "./events";
import type { RunHost } from "./host";
import { shownUsage } from "./usage";

/** The read side of one run (RunDO's `status`, `createdWorker`, `eventsSince`). */
export class RunReader {
  constructor(
    private readonly host: Pick<RunHost, "sql" | "row" | "keyGrammar">,
    private readonly parts: { journal: SqliteJournalStore; pinned: RunCatalog; approvals: RunApprovals; waits: RunWaits },
  ) {}

  status(): RunView | null {
    const run = this.host.row();
    if (!run) return null;
    const journal = this.parts.journal.load();
    return {
      id: run.id,
      worker: run.worker,
      status: run.status,
      input: parse(run.input),
      output: parse(run.output),
      error: parse(run.error),
      usage: shownUsage(journalUsage(journal), run.usage),
      approval_mode: run.approval_mode,
      trigger: parse(run.trigger),
      created_at: run.created_at,
      updated_at: run.updated_at,
      catalog_version: this.parts.pinned.version(),
      approvals: this.parts.approvals.list(),
      waits: TERMINAL.includes(run.status) ? [] : this.parts.waits.list(),
      call_tree: callTree(journal, this.host.keyGrammar()),
    };
  }

  /** A worker this run created, as `.worker` file text. */
  createdWorker(name: string): Answer<{ text: string }> {
    if (!this.host.row()) return { ok: false, status: 404, error: "unknown run" };
    const creation = findCreation(this.parts.journal.load(), name);
    if (!creation) return { ok: false, status: 404, error: `this run created no worker "${name}"` };
    return { ok: true, text: workerFileText(creation) };
  }

  /** Events after a cursor (`<journal seq>-<event seq>`), oldest first; `done` once the run ended and all are sent. */
  eventsSince(cursor: string, limit: number): { events: RunEvent[]; done: boolean } | null {
    const run = this.host.row();
    if (!run) return null;
    const { sql } = this.host;
    const [j = 0, e = 0] = cursor.split("-").map((n) => Number(n) || 0);
    const steps = sql.all<JournalRow>`SELECT seq, key, value FROM journal WHERE seq > ${j} ORDER BY seq LIMIT ${limit}`;
    const runEvents = sql.all<EventRow>`SELECT seq, after_step, type, data FROM events WHERE seq > ${e} ORDER BY seq LIMIT ${limit}`;
    const events = mergeEvents(steps, runEvents, j, e, this.parts.approvals.recordedEvents(), this.host.keyGrammar());
    const full = steps.length === limit || runEvents.length === limit;
    return { events, done: !full && TERMINAL.includes(run.status) };
  }
}
