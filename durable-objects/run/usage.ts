/**
 * A run's usage as readers show it. Owns no table: reads the `journal` and the
 * run's outcome. Needs the SQL only.
 */

import { CHILD_END_LIKE, MODEL_STEP_LIKE } from "../../src/engine/journal/keys";
import { journalUsage } from "../../src/engine/journal/run-usage";
import type { Usage } from "../../src/engine/types/usage";
import { parse, type JsonText, type Sql } from "../sql";

/**
 * The run's usage as every reader shows it (`GET /runs/:id`, the page, the index, the
 * logs): the journal's count (`journalUsage`), which is current while the run is in
 * flight or after a cancel; or the outcome's when the engine counted more there — an
 * answer over the journal's bound is paid for and counted, never journaled (the run
 * fails on it). `outcome`: `run_current.usage` (JSON text), from the last pause or end.
 */
export function shownUsage(journal: Usage, outcome: JsonText<Usage> | null): Usage {
  const ended = parse(outcome);
  return ended && ended.requests > journal.requests ? ended : journal;
}

/**
 * `shownUsage` for the index and the logs, which do not load the journal: only rows whose
 * key could be a model step (`MODEL_STEP_LIKE`, the key grammar's superset that
 * `journalUsage` narrows with `parseKey`) or a child run's end (`CHILD_END_LIKE`), and only
 * their usage and cost, never the answer's text or the child's output.
 */
export function runUsage(sql: Sql, outcome: JsonText<Usage> | null): Usage {
  const rows = sql.all<{
    key: string;
    r: number | null;
    i: number | null;
    o: number | null;
    c: number | null;
  }>`SELECT key, value ->> '$.usage.requests' AS r, value ->> '$.usage.inputTokens' AS i, value ->> '$.usage.outputTokens' AS o,
      coalesce(value ->> '$.costUsd', value ->> '$.usage.costUsd') AS c
    FROM journal WHERE key LIKE ${MODEL_STEP_LIKE[0]} OR key LIKE ${MODEL_STEP_LIKE[1]} OR key LIKE ${CHILD_END_LIKE}`;
  return shownUsage(
    journalUsage(rows.map((r) => [r.key, { usage: { requests: r.r, inputTokens: r.i, outputTokens: r.o, costUsd: r.c }, costUsd: r.c }])),
    outcome,
  );
}
