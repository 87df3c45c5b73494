/**
 * The run index's listing: one page of runs matching a filter, newest first, keyset-paged on
 * (created_at, id). The whole query logic lives here, over one `Sql`, so an index spread over
 * several objects runs this same page on each and merges their pages by (created_at, id).
 *
 * Without attribute criteria the page walks `runs` by (created_at, id) and checks the other
 * criteria on each row. With them, it walks `run_attributes` for the first one's (name, value)
 * in the same order, looks each run up by id, and checks the others (further attributes by
 * their key: one row each): it reads the runs that have that attribute, never the whole table.
 */

import type { RunQuery } from "../../src/runs/index-types";
import type { RunStatusName } from "../../src/runs/types";
import type { JsonText, Sql } from "../sql";
import type { Attributes } from "../../src/engine/attributes";
import type { RunListItem } from "../../src/runs/index-types";

/** A row of `runs`. */
export interface IndexedRun {
  id: string;
  worker: string;
  status: RunStatusName;
  trigger_kind: string;
  trigger_name: string | null;
  created_at: number;
  updated_at: number;
  usage: JsonText<RunListItem["usage"]>;
  version: number;
  attributes: JsonText<Attributes> | null;
}

/** Past every real cursor: the first page starts here. */
export const TOP = { created_at: Number.MAX_SAFE_INTEGER, id: "\uffff" };

/** Up to `q.limit + 1` rows (one more than the page: whether there is a next one), newest first. */
export function matchingRuns(sql: Sql, q: RunQuery): IndexedRun[] {
  const after = q.after ?? TOP;
  const since = q.since ?? 0;
  const status = q.status ?? null;
  const worker = q.worker ?? null;
  const trigger = q.trigger ?? null;
  const attrs = Object.entries(q.attributes ?? {});
  if (!attrs.length) {
    return sql.all<IndexedRun>`SELECT * FROM runs
      WHERE (created_at, id) < (${after.created_at}, ${after.id}) AND created_at >= ${since}
        AND (${status} IS NULL OR status = ${status}) AND (${worker} IS NULL OR worker = ${worker})
        AND (${trigger} IS NULL OR trigger_kind = ${trigger} OR trigger_name = ${trigger})
      ORDER BY created_at DESC, id DESC LIMIT ${q.limit + 1}`;
  }
  const [n1, v1] = attrs[0]!;
  const [n2, v2] = attrs[1] ?? [null, null];
  const [n3, v3] = attrs[2] ?? [null, null];
  return sql.all<IndexedRun>`SELECT r.* FROM run_attributes a JOIN runs r ON r.id = a.run_id
    WHERE a.name = ${n1} AND a.value = ${v1} AND (a.created_at, a.run_id) < (${after.created_at}, ${after.id}) AND a.created_at >= ${since}
      AND (${n2} IS NULL OR EXISTS (SELECT 1 FROM run_attributes b
        WHERE b.name = ${n2} AND b.value = ${v2} AND b.created_at = a.created_at AND b.run_id = a.run_id))
      AND (${n3} IS NULL OR EXISTS (SELECT 1 FROM run_attributes c
        WHERE c.name = ${n3} AND c.value = ${v3} AND c.created_at = a.created_at AND c.run_id = a.run_id))
      AND (${status} IS NULL OR r.status = ${status}) AND (${worker} IS NULL OR r.worker = ${worker})
      AND (${trigger} IS NULL OR r.trigger_kind = ${trigger} OR r.trigger_name = ${trigger})
    ORDER BY a.created_at DESC, a.run_id DESC LIMIT ${q.limit + 1}`;
}

/** A run's rows of `run_attributes` follow its attributes: what it held goes, what it holds comes (nothing when equal). */
export function indexAttributes(sql: Sql, run: { id: string; created_at: number }, held: Attributes, now: Attributes): void {
  for (const [name, value] of Object.entries(held)) {
    if (now[name] !== value)
      sql.run`DELETE FROM run_attributes WHERE name = ${name} AND value = ${value} AND created_at = ${run.created_at} AND run_id = ${run.id}`;
  }
  for (const [name, value] of Object.entries(now)) {
    if (held[name] !== value)
      sql.run`INSERT INTO run_attributes (name, value, created_at, run_id) VALUES (${name}, ${value}, ${run.created_at}, ${run.id}) ON CONFLICT DO NOTHING`;
  }
}
