/**
 * A run's log lines (Workers Logs). Owns no table: reads the run row and the
 * journal's usage. Needs the SQL only.
 */

import { parseKey } from "../../src/engine/journal/keys";
import type { RecordedCall } from "../../src/engine/toolsets/wrappers/journaled";
import { triggerRef } from "../../src/runs/index-types";
import { runUsage } from "./usage";
import { RUN_CURRENT } from "../schema";
import type { RunRow } from "../rows";
import { parse, type Sql } from "../sql";
import { SqliteJournalStore } from "../sqlite-journal";

/**
 * Which run events become a log line, and which of their fields travel with it.
 * Only ids, names, counts and codes: never an input, output, tool argument, error
 * message or note (any of which may quote something secret or personal).
 */
const LOGGED: Record<string, readonly string[]> = {
  run_queued: [],
  run_running: [],
  run_awaiting_approval: ["waiting_for"],
  run_waiting: ["waiting_for"],
  run_succeeded: [],
  run_failed: [],
  run_cancelled: [],
  run_cancelling: [],
  run_deleted: ["retention_days"],
  run_checkpoint: [],
  run_retry: ["attempt"],
  run_swept: ["attempt", "of"],
  approval_requested: ["approval_id", "tool"],
  approval_recorded: ["approval_id", "status"],
  approval_refused: ["approval_id", "via", "refusal"],
  // A send the platform refused: its code (never the address or the reason's text) and whether it is tried again.
  approval_email_failed: ["approval_id", "kind", "code", "retry"],
  answer_email_failed: ["message", "code", "retry"],
  wait_ended: ["wait_id", "kind", "how"],
  event_received: ["name", "applied", "duplicate"],
  event_dropped: ["id", "name"],
  messages_dropped: ["messages"],
  // A completion webhook's attempt: its status and count (never the URL, which may carry a token).
  notify_sent: ["event_id", "status", "attempt"],
  notify_failed: ["event_id", "status", "attempt", "retry"],
  flow_notify_failed: ["attempt"],
  wait_index_failed: [],
  step_failed: ["step"],
  index_report_failed: ["version"],
};

/**
 * One JSON line per run lifecycle event and per failed step, for Workers Logs and
 * Logpush to filter and alert on: `{"edgework":"run_failed","run_id":…}`.
 * Reads the run row as it stands (inside the event's transaction, so already updated).
 */
export function logRunEvent(sql: Sql, event: string, data: Record<string, unknown> = {}): void {
  const fields = LOGGED[event];
  if (!fields) return;
  const run = sql.one<
    Pick<RunRow, "id" | "worker" | "status" | "trigger" | "usage" | "error" | "created_at">
  >`SELECT id, worker, status, trigger, usage, error, created_at FROM ${RUN_CURRENT} AS run_current`;
  if (!run) return;
  const now = Date.now();
  const line: Record<string, unknown> = {
    edgework: event,
    run_id: run.id,
    worker: run.worker,
    trigger: triggerRef(parse(run.trigger)),
    status: run.status,
    run_ms: now - run.created_at,
    usage: runUsage(sql, run.usage),
  };
  if (event === "run_failed") line.error_code = parse(run.error)?.code ?? null;
  for (const f of fields) if (f in data) line[f] = data[f];
  console.log(JSON.stringify(line));
}

/** The run's journal, logging each tool call that failed (its step key only: the message may quote arguments). */
export class LoggedJournalStore extends SqliteJournalStore {
  constructor(private readonly runSql: Sql) {
    super(runSql);
  }

  /** A step that began before this activation (a model request handed to the queue): when, else undefined. */
  startedEarlier?: (key: string) => number | undefined;
  /** Told of each step the engine recorded, once (replay records nothing): attributes.ts keeps a `ctx.setAttribute`'s. */
  stepRecorded?: (key: string, value: unknown) => void;

  override put(key: string, value: unknown, text?: string, startedAt?: number): void {
    super.put(key, value, text, this.startedEarlier?.(key) ?? startedAt);
    this.stepRecorded?.(key, value);
    if ((value as RecordedCall | null)?.ok !== false) return;
    const k = parseKey(key);
    if (k.kind === "result") logRunEvent(this.runSql, "step_failed", { step: k.call });
  }
}
