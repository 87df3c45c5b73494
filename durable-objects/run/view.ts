/**
 * What a run shows its watchers: the run view, its events and created workers.
 * Owns no table: reads `journal` and `events` (schema.ts; the answers not mailed from answer-mail.ts's events), the pinned catalog, the
 * versions the run ran under, the approvals and the waits. Needs from its host: the SQL, `row` and `keyGrammar`.
 */

import { compactionsOf } from "../../src/engine/journal/compactions";
import type { RunChildren } from "./children";
import type { ParentRef } from "../../src/runs/types";
import { callTree } from "../../src/engine/journal/call-tree";
import { stepKind } from "../../src/engine/journal/keys";
import { journalUsage } from "../../src/engine/journal/run-usage";
import { findCreation, workerFileText } from "../../src/engine/run/created-workers";
import { forkedFrom, type JournalStepView } from "../../src/runs/fork";
import { pausedOn } from "../../src/runs/question-waits";
import { TERMINAL, type Answer, type AnswerEmailFailure, type RunEvent, type RunView } from "../../src/runs/types";
import type { EventRow, JournalRow } from "../rows";
import { parse } from "../sql";
import type { SqliteJournalStore } from "../sqlite-journal";
import type { RunApprovals } from "./approvals";
import type { RunCatalog } from "./catalog";
import { completeBatch, mergeEvents, parseCursor } from "./events";
import type { RunWaits } from "./waits";
import type { RunHost } from "./host";
import type { RunVersions } from "./versions";
import { timelineOf } from "./timeline";
import { shownUsage } from "./usage";
import type { RunConversation } from "./conversation";
import type { RunAttributes } from "./attributes";

/** The read side of one run (RunDO's `status`, `createdWorker`, `eventsSince`). */
export class RunReader {
  constructor(
    private readonly host: Pick<RunHost, "sql" | "row" | "keyGrammar">,
    private readonly parts: {
      journal: SqliteJournalStore;
      pinned: RunCatalog;
      versions: RunVersions;
      approvals: RunApprovals;
      waits: RunWaits;
      conversation: Pick<RunConversation, "messages">;
      attributes: Pick<RunAttributes, "current">;
      children: Pick<RunChildren, "parent" | "list">;
    },
  ) {}

  status(): RunView | null {
    const run = this.host.row();
    if (!run) return null;
    const rows = this.host.sql.all<JournalRow>`SELECT seq, key, value, at, started_at FROM journal ORDER BY seq`;
    const journal = new Map(rows.map((r) => [r.key, parse(r.value)]));
    const tree = callTree(journal, this.host.keyGrammar());
    const approvals = this.parts.approvals.list();
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
      attributes: this.parts.attributes.current(),
      created_at: run.created_at,
      updated_at: run.updated_at,
      catalog_version: this.parts.pinned.version(),
      ...this.parts.versions.view(),
      approvals,
      waits: TERMINAL.includes(run.status) ? [] : pausedOn(this.parts.waits.list(), approvals),
      call_tree: tree,
      forked_from: forkedFrom(parse(run.trigger)),
      parent: parentOf(this.parts.children.parent()),
      children: this.parts.children.list(),
      timeline: timelineOf(this.host.sql, rows, tree, run),
      messages: this.parts.conversation.messages(journal),
      answer_email_failures: this.answerEmailFailures(),
      compactions: compactionsOf(
        rows.flatMap((r) => (r.key.endsWith("/compact") ? [{ key: r.key, value: journal.get(r.key), at: r.at }] : [])),
        journal,
      ),
    };
  }

  /** A conversation by email: the answers given up (answer-mail.ts), from their events. */
  private answerEmailFailures(): AnswerEmailFailure[] {
    return this.host.sql.all<{ message: number; reason: string; code: string | null; at: number }>`
      SELECT data ->> '$.message' AS message, data ->> '$.error' AS reason, data ->> '$.code' AS code, at FROM events
      WHERE type = 'answer_email_failed' AND NOT (data ->> '$.retry') ORDER BY seq`.map((r) => ({ ...r, code: r.code ?? "E_UNKNOWN" }));
  }

  /** A worker this run created, as `.worker` file text. */
  createdWorker(name: string): Answer<{ text: string }> {
    if (!this.host.row()) return { ok: false, status: 404, error: "unknown run" };
    const creation = findCreation(this.parts.journal.load(), name);
    if (!creation) return { ok: false, status: 404, error: `this run created no worker "${name}"` };
    return { ok: true, text: workerFileText(creation) };
  }

  /** The journal's steps after seq `after`, at most `limit`: key, kind, time and size, never a value. */
  journalSteps(after: number, limit: number): { steps: JournalStepView[]; next: number | null } | null {
    if (!this.host.row()) return null;
    const rows = this.host.sql.all<Omit<JournalStepView, "kind">>`
      SELECT seq, key, at, length(CAST(value AS BLOB)) AS bytes FROM journal WHERE seq > ${after} ORDER BY seq LIMIT ${limit + 1}`;
    const steps = rows.slice(0, limit).map((r) => ({ seq: r.seq, key: r.key, kind: stepKind(r.key), at: r.at, bytes: r.bytes }));
    return { steps, next: rows.length > limit ? steps.at(-1)!.seq : null };
  }

  /** Events after a cursor (events.ts parseCursor), oldest first; `done` once the run ended and all are sent. */
  eventsSince(cursor: string, limit: number): { events: RunEvent[]; done: boolean } | null {
    const run = this.host.row();
    if (!run) return null;
    const { sql } = this.host;
    const from = parseCursor(cursor);
    const batch = completeBatch(
      sql.all<JournalRow>`SELECT seq, key, value FROM journal WHERE seq > ${from.j} ORDER BY seq LIMIT ${limit}`,
      sql.all<EventRow>`SELECT seq, after_step, type, data FROM events WHERE seq > ${from.e} ORDER BY seq LIMIT ${limit}`,
      limit,
    );
    const events = mergeEvents(batch.steps, batch.runEvents, from, this.parts.approvals.recordedEvents(), this.host.keyGrammar());
    return { events, done: !batch.cut && TERMINAL.includes(run.status) };
  }
}

/** A child run's parent as its view shows it. */
const parentOf = (p: ParentRef | undefined) => (p ? { run: p.run, call_path: p.key } : null);
