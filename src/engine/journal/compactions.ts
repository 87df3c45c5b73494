import type { CompactionRecord } from "../run/compaction";
import type { RecordedResponse } from "../run/model-step";
import { parseKey, summaryKey } from "./keys";

/** Characters of a summary a view shows (the journal holds all of it, bounded by compaction.ts). */
const SHOWN_SUMMARY_CHARS = 4_000;

/** Where a worker's history was compacted, and what replaced it (`GET /runs/:id` `compactions`, the run page). */
export interface CompactionView {
  /** The worker call whose history it was. */
  path: string;
  /** Before this turn's model request. */
  turn: number;
  compact: "summarize" | "window";
  /** Messages replaced (after the first user message), by a summary or a note. */
  replaced: number;
  tokens_before: number;
  tokens_after: number;
  /** The summarizer (`summarize`), else null. */
  model: string | null;
  /** The summary that replaced them, cut for the view; null for a window. */
  summary: string | null;
  at: number;
}

/** The compactions among a run's steps, in the order they were recorded. */
export function compactionsOf(steps: Iterable<{ key: string; value: unknown; at: number }>, journal: ReadonlyMap<string, unknown>): CompactionView[] {
  const views: CompactionView[] = [];
  for (const { key, value, at } of steps) {
    const k = parseKey(key);
    if (k.kind !== "compact") continue;
    const c = value as CompactionRecord;
    const text = c.compact === "summarize" ? ((journal.get(summaryKey(key)) as RecordedResponse | undefined)?.text ?? "") : null;
    views.push({
      path: k.frame,
      turn: k.turn,
      compact: c.compact,
      replaced: c.to - c.from,
      tokens_before: c.tokensBefore,
      tokens_after: c.tokensAfter,
      model: c.model ?? null,
      summary: text === null ? null : text.length > SHOWN_SUMMARY_CHARS ? `${text.slice(0, SHOWN_SUMMARY_CHARS)}…` : text,
      at,
    });
  }
  return views;
}
