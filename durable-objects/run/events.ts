/**
 * The events watchers see: the `journal` and `events` tables as one stream, in true
 * order. Owns no table; a pure function of their rows.
 */

import type { ApprovalDecision } from "../../src/engine";
import { stepEvents } from "../../src/engine/journal/events";
import { KEY_GRAMMAR, type KeyGrammar } from "../../src/engine/journal/keys";
import type { RunEvent } from "../../src/runs/types";
import type { EventRow, JournalRow } from "../rows";
import { parse } from "../sql";

/** The approval_recorded event a decision step implies, by journal key (RunApprovals.recordedEvents). */
export type RecordedEvents = ReadonlyMap<string, (decision: ApprovalDecision) => Record<string, unknown>>;

/** What a run event shows watchers: the outcome an ending or pause event stores for run_current stays in GET /runs/:id. */
function shown(type: string, data: Record<string, unknown>): Record<string, unknown> {
  if (!type.startsWith("run_")) return data;
  const { output: _output, usage: _usage, ...rest } = data;
  return rest;
}

/**
 * The run's two logs as one stream, in true order: journal step s sorts at
 * (s, 0); an event written after step s at (s, 1, its seq). Every event has an id
 * of its own, a cursor (`<journal seq>-<event seq>`, eventsSince reads it): the
 * last (or only) event of a row has the cursor after its row; an earlier one of a
 * step's several (`call` and `turn`) the cursor before its row and how many of the
 * row's events it has seen (`<j>-<e>-<n>`), so a reconnect after any event resumes
 * exactly after it. Starts from (j, e), skipping the first `skip` events of the
 * first row (the cursor named an event inside it).
 */
export function mergeEvents(
  steps: Pick<JournalRow, "seq" | "key" | "value">[],
  runEvents: Pick<EventRow, "seq" | "after_step" | "type" | "data">[],
  from: { j: number; e: number; skip?: number },
  recorded: RecordedEvents = new Map(),
  grammar: KeyGrammar = KEY_GRAMMAR,
): RunEvent[] {
  const stepItems = (key: string, value: unknown) => {
    const items = stepEvents(key, value, grammar);
    const implied = recorded.get(key);
    return implied ? [...items, { type: "approval_recorded", data: implied(value as ApprovalDecision) }] : items;
  };
  const merged = [
    ...steps.map((r) => ({ order: [r.seq, 0, 0], j: r.seq, e: undefined, items: stepItems(r.key, parse(r.value)) })),
    ...runEvents.map((r) => ({ order: [r.after_step, 1, r.seq], j: undefined, e: r.seq, items: [{ type: r.type, data: shown(r.type, parse(r.data)) }] })),
  ].sort((a, b) => a.order[0]! - b.order[0]! || a.order[1]! - b.order[1]! || a.order[2]! - b.order[2]!);
  const events: RunEvent[] = [];
  let { j, e } = from;
  let skip = from.skip ?? 0;
  for (const m of merged) {
    const before = `${j}-${e}`;
    if (m.j !== undefined) j = m.j;
    if (m.e !== undefined) e = m.e;
    m.items.forEach((item, i) => {
      if (i < skip) return;
      events.push({ id: i === m.items.length - 1 ? `${j}-${e}` : `${before}-${i + 1}`, ...item });
    });
    skip = 0;
  }
  return events;
}

/**
 * A batch read with LIMIT from each log, cut where both are complete: past the last
 * step read, an event may belong after a step not read yet (and past the last event
 * read, a step after an event not read yet). What is cut comes in the next batch,
 * so the merged order is the true one across batches and every cursor resumes exactly.
 */
export function completeBatch<S extends Pick<JournalRow, "seq">, E extends Pick<EventRow, "after_step">>(
  steps: S[],
  runEvents: E[],
  limit: number,
): { steps: S[]; runEvents: E[]; cut: boolean } {
  const lastStep = steps.length === limit ? steps.at(-1)!.seq : Number.POSITIVE_INFINITY;
  const lastEvent = runEvents.length === limit ? runEvents.at(-1)!.after_step : Number.POSITIVE_INFINITY;
  return {
    steps: steps.filter((s) => s.seq <= lastEvent),
    runEvents: runEvents.filter((r) => r.after_step <= lastStep),
    cut: steps.length === limit || runEvents.length === limit,
  };
}

/** A cursor as eventsSince reads it: `<j>-<e>` or `<j>-<e>-<seen>`; anything unreadable counts as 0. */
export function parseCursor(cursor: string): { j: number; e: number; skip: number } {
  const [j = 0, e = 0, skip = 0] = cursor
    .split("-", 3)
    .map((n) => Number(n))
    .map((n) => (Number.isSafeInteger(n) && n > 0 ? n : 0));
  return { j, e, skip };
}
