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

/**
 * Each pause: from a `run_awaiting_approval` event to what ended it, the first journal
 * step after it (a decision or an expiry is recorded there) or the next lifecycle event;
 * open (null) while neither came.
 */
function pauses(sql: Sql, rows: readonly Pick<JournalRow, "seq" | "at">[]): Array<{ start: number; end: number | null }> {
  const events = sql.all<{ type: string; after_step: number; at: number }>`
    SELECT type, after_step, at FROM events
    WHERE type IN ('run_queued', 'run_running', 'run_awaiting_approval', 'approval_recorded', 'run_succeeded', 'run_failed', 'run_cancelled') ORDER BY seq`;
  return events.flatMap((e, i) => {
    if (e.type !== "run_awaiting_approval") return [];
    const step = rows.find((r) => r.seq > e.after_step)?.at;
    const next = events[i + 1]?.at;
    const ends = [step, next].filter((t): t is number => t !== undefined);
    return [{ start: e.at, end: ends.length ? Math.min(...ends) : null }];
  });
}
