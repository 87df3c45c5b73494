/**
 * The run's timeline (src/engine/journal/timeline.ts) from its rows: each step's times
 * from its journal row, the pauses from its lifecycle events. Owns no table; reads
 * `journal` (given) and `events`.
 */

import type { CallNode } from "../../src/engine/journal/call-tree";
import { runTimeline, type Timeline } from "../../src/engine/journal/timeline";
import type { JournalRow, RunRow } from "../rows";
import type { Sql } from "../sql";

export function timelineOf(sql: Sql, rows: readonly Pick<JournalRow, "seq" | "key" | "at" | "started_at">[], tree: CallNode | null, run: RunRow): Timeline {
  const steps = rows.map((r) => ({ key: r.key, at: r.at, startedAt: r.started_at }));
  // Up to the run's last change, never "now": the same run reads the same until it changes.
  return runTimeline(steps, tree, pauses(sql, rows), { start: run.created_at, end: Math.max(run.updated_at, rows.at(-1)?.at ?? 0) });
}

/** A pause's label on the waterfall, by the event that began it. */
const PAUSE_LABELS: Record<string, string> = { run_awaiting_approval: "paused for approval", run_waiting: "waiting" };

/**
 * Each pause: from a `run_awaiting_approval` or `run_waiting` event to what ended it,
 * the first journal step after it (a decision, an answer, an expiry or a wait's end is
 * recorded there) or the next lifecycle event; open (null) while neither came.
 */
function pauses(sql: Sql, rows: readonly Pick<JournalRow, "seq" | "at">[]): Array<{ start: number; end: number | null; label: string }> {
  const events = sql.all<{ type: string; after_step: number; at: number }>`
    SELECT type, after_step, at FROM events
    WHERE type IN ('run_queued', 'run_running', 'run_awaiting_approval', 'run_waiting', 'approval_recorded', 'run_succeeded', 'run_failed', 'run_cancelled') ORDER BY seq`;
  return events.flatMap((e, i) => {
    const label = PAUSE_LABELS[e.type];
    if (!label) return [];
    const step = rows.find((r) => r.seq > e.after_step)?.at;
    const next = events[i + 1]?.at;
    const ends = [step, next].filter((t): t is number => t !== undefined);
    return [{ start: e.at, end: ends.length ? Math.min(...ends) : null, label }];
  });
}
