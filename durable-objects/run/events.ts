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
 * (s, 0); an event written after step s at (s, 1, its seq). Each event's id is
 * the cursor after it (`<journal seq>-<event seq>`), starting from (j, e).
 */
export function mergeEvents(
  steps: Pick<JournalRow, "seq" | "key" | "value">[],
  runEvents: Pick<EventRow, "seq" | "after_step" | "type" | "data">[],
  j: number,
  e: number,
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
  for (const m of merged) {
    if (m.j !== undefined) j = m.j;
    if (m.e !== undefined) e = m.e;
    for (const item of m.items) events.push({ id: `${j}-${e}`, ...item });
  }
  return events;
}
