/**
 * A run's durable waits: timers and event waits (ctx.sleep, ctx.waitForEvent, the
 * `wait` kind), and the events delivered to it. Owns the `waits` and `inbox` tables
 * (schema.ts, made on first use). A wait's end — its wake-up, its event, its timeout —
 * is one journal step under the wait's key, as an approval's decision is; replay hands
 * it to the waiting code. Needs from its host: the SQL, `event` (event_dropped) and
 * `noted` (wait_ended: its row is the journal step). The caller runs each method
 * that writes inside its transaction.
 */

import type { PendingWait, WaitEnd } from "../../src/engine";
import { waitLabel } from "../../src/engine/waits/wait";
import { TERMINAL, type Answer, type EventDelivery, type EventOutcome, type RunStatusName, type WaitView } from "../../src/runs/types";
import type { CountRow, InboxRow, WaitRow } from "../rows";
import { madeOnFirstUse, makeOnFirstUse, WAITS_PENDING } from "../schema";
import { json, parse } from "../sql";
import type { SqliteJournalStore } from "../sqlite-journal";
import { runEnded } from "./approvals";
import type { RunHost } from "./host";

/** Events kept for a wait that has not started yet; past this the oldest is dropped (with an event_dropped note). */
export const MAX_BUFFERED_EVENTS = 20;
/** Deliveries one run accepts in all (each id is kept, so a repeat stays a repeat); past this: 429. */
export const MAX_EVENTS_PER_RUN = 1000;

export class RunWaits {
  /** Set once this object has its tables (memory only: a read finds out again after eviction). */
  private made = { waits: false, inbox: false };

  constructor(
    private readonly host: Pick<RunHost, "sql" | "event" | "noted">,
    private readonly journal: SqliteJournalStore,
  ) {}

  private get sql() {
    return this.host.sql;
  }

  /**
   * Stores a pending wait once (a replay that asks again finds it): from now on its end can be recorded.
   * A child's end is recorded whenever the child tells it (children.ts), maybe before the wait was asked
   * and after this activation loaded its journal: any step under its key ends it (asked at step 0).
   */
  request(w: PendingWait): void {
    this.make("waits");
    const child = w.kind === "child";
    this.sql.run`INSERT INTO waits (id, key, kind, name, correlation, until, call_path, worker_chain, reason, created_at, asked_step)
      VALUES (${w.id}, ${w.key}, ${w.kind}, ${w.name ?? null}, ${w.correlation ?? null}, ${w.until}, ${w.callPath}, ${json(w.workerChain)}, ${w.reason ?? null}, ${w.since},
        CASE WHEN ${child ? 1 : 0} = 1 THEN 0 ELSE (SELECT coalesce(max(seq), 0) FROM journal) END)
      ON CONFLICT (id) DO NOTHING`;
  }

  /** The waits not ended, oldest first. */
  pending(): WaitRow[] {
    return this.has("waits") ? this.sql.all<WaitRow>`SELECT * FROM ${WAITS_PENDING} AS waits_pending ORDER BY created_at, id` : [];
  }

  /**
   * Ends what is due: an event wait takes the oldest buffered event for it; a wait
   * whose time has come wakes (a sleep) or times out (an event wait). Returns how many ended.
   */
  endDue(now: number): number {
    let ended = 0;
    for (const w of this.pending()) {
      if (w.kind === "child") continue; // ends when the child tells its end, never by time
      if (w.kind === "event" && this.takeBuffered(w, now)) ended++;
      else if (w.until <= now) {
        this.end(w, w.kind === "sleep" ? { ended: "time", at: now } : { ended: "timeout", at: now, after_ms: Math.max(0, w.until - w.created_at) });
        ended++;
      }
    }
    return ended;
  }

  /**
   * An event for this run, recorded once per id: the oldest wait for its name (and
   * its key, if the wait has one; a signal only a wait with its key) takes it; else it is kept for the next such wait
   * (`buffer`, API deliveries) or changes nothing (a signal: only waits it names).
   */
  deliver(ev: EventDelivery, status: RunStatusName, buffer: boolean, now: number): Answer<EventOutcome> {
    if (TERMINAL.includes(status)) return { ok: false, status: 409, error: `${runEnded(status)}; it takes no events` };
    this.make("inbox");
    // A signal (not buffered) is for the waits under its key only: a keyless wait never asked for it.
    const takes = (w: WaitRow) => w.kind === "event" && w.name === ev.name && (w.correlation === ev.key || (buffer && w.correlation === null));
    // A repeat says whether the run still waits for such an event (a signal's index keeps it then).
    if (this.sql.one`SELECT 1 AS seen FROM inbox WHERE id = ${ev.id}`)
      return { ok: true, applied: false, buffered: false, duplicate: true, waiting: this.pending().some(takes) };
    const count = this.sql.one<CountRow>`SELECT count(*) AS n FROM inbox`!.n;
    if (count >= MAX_EVENTS_PER_RUN) return { ok: false, status: 429, error: `this run has taken its ${MAX_EVENTS_PER_RUN} events; it accepts no more` };
    const wait = this.pending().find(takes);
    if (wait) {
      // The payload lives in the wait's journal step; the row keeps the id (a repeat stays a repeat).
      this.sql.run`INSERT INTO inbox (id, name, correlation, payload, state, at) VALUES (${ev.id}, ${ev.name}, ${ev.key ?? null}, 'null', 'taken', ${now})`;
      this.end(wait, { ended: "event", at: now, id: ev.id, payload: ev.payload });
      return { ok: true, applied: true, buffered: false, duplicate: false };
    }
    if (!buffer) return { ok: true, applied: false, buffered: false, duplicate: false };
    this.sql
      .run`INSERT INTO inbox (id, name, correlation, payload, state, at) VALUES (${ev.id}, ${ev.name}, ${ev.key ?? null}, ${json(ev.payload)}, 'buffered', ${now})`;
    this.dropOverflow();
    return { ok: true, applied: false, buffered: true, duplicate: false };
  }

  /** When the earliest pending wait ends by itself, or null. */
  nextDeadline(): number | null {
    const waits = this.pending().filter((w) => w.kind !== "child");
    return waits.length ? Math.min(...waits.map((w) => w.until)) : null;
  }

  /** Whether any of these waits has ended (e.g. while the activation that paused on them ran). */
  anyEnded(ids: string[]): boolean {
    const open = new Set(this.pending().map((w) => w.id));
    return ids.some((id) => !open.has(id));
  }

  /** The pending event waits a signal trigger can reach (those with a correlation key). */
  correlated(): Array<Pick<WaitRow, "id" | "name" | "correlation" | "until" | "created_at">> {
    return this.pending().filter((w) => w.kind === "event" && w.name !== null && w.correlation !== null);
  }

  list(): WaitView[] {
    return this.pending().map((w) => ({
      id: w.id,
      kind: w.kind,
      ...(w.name !== null ? { name: w.name } : {}),
      ...(w.correlation !== null ? { key: w.correlation } : {}),
      ...(w.kind === "sleep" ? { until: w.until } : {}),
      expires_at: w.until,
      ...(w.reason !== null ? { reason: w.reason } : {}),
      call_path: w.call_path,
      worker_chain: parse(w.worker_chain),
      created_at: w.created_at,
    }));
  }

  /** The oldest buffered event this wait takes, taken: true if there was one. */
  private takeBuffered(w: WaitRow, now: number): boolean {
    if (!this.has("inbox")) return false;
    const ev = this.sql.one<InboxRow>`SELECT * FROM inbox WHERE state = 'buffered' AND name = ${w.name}
      AND (${w.correlation} IS NULL OR correlation = ${w.correlation}) ORDER BY at, id LIMIT 1`;
    if (!ev) return false;
    this.sql.run`UPDATE inbox SET state = 'taken', payload = 'null' WHERE id = ${ev.id}`;
    this.end(w, { ended: "event", at: now, id: ev.id, payload: parse(ev.payload) });
    return true;
  }

  /** Keeps at most MAX_BUFFERED_EVENTS buffered: the oldest beyond are dropped, each with a note. */
  private dropOverflow(): void {
    const over = this.sql.all<Pick<InboxRow, "id" | "name">>`SELECT id, name FROM inbox WHERE state = 'buffered'
      ORDER BY at DESC, id DESC LIMIT -1 OFFSET ${MAX_BUFFERED_EVENTS}`;
    for (const ev of over) {
      this.sql.run`UPDATE inbox SET state = 'dropped', payload = 'null' WHERE id = ${ev.id}`;
      this.host.event("event_dropped", { id: ev.id, name: ev.name, reason: `more than ${MAX_BUFFERED_EVENTS} events were waiting for a wait` });
    }
  }

  /** One row: the journal step (see the file comment). */
  private end(w: Pick<WaitRow, "id" | "key" | "kind" | "name">, e: WaitEnd): void {
    this.journal.record(w.key, { ...e, wait: waitLabel({ kind: w.kind, name: w.name ?? undefined }) });
    this.host.noted("wait_ended", { wait_id: w.id, kind: w.kind, how: e.ended });
  }

  private make(table: "waits" | "inbox"): void {
    if (this.made[table]) return;
    makeOnFirstUse(this.sql, table);
    this.made[table] = true;
  }

  private has(table: "waits" | "inbox"): boolean {
    return (this.made[table] ||= madeOnFirstUse(this.sql, table));
  }
}
