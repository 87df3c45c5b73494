/**
 * The run index as the app reads it, over every object it spreads over (index-shards.ts): each
 * listing asks every shard the same page (src/runs/rpc.ts `runIndex`) and merges here. Pages are keyset-paged on (created_at, id), one
 * order across shards, so the cursor of the merged page (its last run) is every shard's position at
 * once: the next page asks each shard for runs strictly older than it. A run lives in exactly one
 * shard, so the merge sees each run once; a cursor carries no shard, and none can be forged to reach
 * past the listing's own filters.
 */

import { MAX_PENDING_LISTED, type PendingApprovalItem, type RunListItem } from "./index-types";

/** A listing page: runs newest first, and where the next page starts (null: the last page). */
export interface RunPage {
  runs: RunListItem[];
  next: { created_at: number; id: string } | null;
}

/** Strings in SQLite's BINARY order (ids are ASCII: code-unit order is byte order), never the locale's. */
const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Newest first: (created_at, id) descending, the order of every shard's page. */
const newestFirst = (a: RunListItem, b: RunListItem) => b.created_at - a.created_at || byCode(b.id, a.id);

/** Shards' pages of one query merged into the page the single index would have given. */
export function mergePages(pages: RunPage[], limit: number): RunPage {
  const all = pages.flatMap((p) => p.runs).sort(newestFirst);
  const runs = all.slice(0, limit);
  const last = runs.at(-1);
  // More to come: runs past this page, or a shard that had more than it returned.
  const more = all.length > limit || pages.some((p) => p.next !== null);
  return { runs, next: more && last ? { created_at: last.created_at, id: last.id } : null };
}

/** Oldest first: (created_at, run_id, id), each shard's order. */
const oldestFirst = (a: PendingApprovalItem, b: PendingApprovalItem) => a.created_at - b.created_at || byCode(a.run_id, b.run_id) || byCode(a.id, b.id);

/** Shards' pending approvals merged, at most `max`; truncated when any shard was, or the merge is. */
export function mergeApprovals(lists: { approvals: PendingApprovalItem[]; truncated: boolean }[], max = MAX_PENDING_LISTED) {
  const all = lists.flatMap((l) => l.approvals).sort(oldestFirst);
  return { approvals: all.slice(0, max), truncated: all.length > max || lists.some((l) => l.truncated) };
}
