import { describe, expect, it } from "vitest";
import { mergeApprovals, mergePages } from "../../src/runs/index-listing";
import { indexObjects, indexShardOf, isIndexObject, LEGACY_INDEX, RUN_INDEX_SHARDS } from "../../src/runs/index-shards";
import type { RunListItem } from "../../src/runs/index-types";

const run = (id: string, created_at: number): RunListItem => ({
  id,
  worker: "w",
  status: "succeeded",
  trigger: { kind: "api" },
  attributes: {},
  created_at,
  updated_at: created_at,
  usage: null as unknown as RunListItem["usage"],
});

describe("the run index's shards", () => {
  it("a run's shard is fixed by its id: the hash never changes across versions (a deleted run's tombstone is looked up by it)", () => {
    // FNV-1a of the id, mod 16: these values are what every deployed run already chose.
    expect(["run-1", "a", "0123456789abcdef"].map(indexShardOf)).toEqual(["index/12", "index/12", "index/13"]);
    expect(indexObjects()).toHaveLength(RUN_INDEX_SHARDS + 1);
    expect(indexObjects().at(-1)).toBe(LEGACY_INDEX);
    for (const name of indexObjects()) expect(isIndexObject(name)).toBe(true);
    for (const name of ["index/", "index/-1", "index/1/2", "index/99999", "Index", "shard-1", "index/1\n"]) expect(isIndexObject(name), name).toBe(false);
  });

  it("merging shards' pages: ties on created_at broken by id in byte order, a shard with more gives a next cursor", () => {
    const a = { runs: [run("b", 5), run("B", 5), run("a", 3)], next: { created_at: 3, id: "a" } };
    const b = { runs: [run("c", 5), run("_", 4)], next: null };
    expect(mergePages([a, b], 3)).toEqual({ runs: [run("c", 5), run("b", 5), run("B", 5)], next: { created_at: 5, id: "B" } });
    // Every shard done and the merge fits: the last page.
    expect(
      mergePages(
        [
          { runs: [run("x", 1)], next: null },
          { runs: [], next: null },
        ],
        3,
      ),
    ).toEqual({ runs: [run("x", 1)], next: null });
    // A shard past its page while the merge fits the limit still has more to give.
    expect(mergePages([{ runs: [run("x", 2)], next: { created_at: 2, id: "x" } }], 5).next).toEqual({ created_at: 2, id: "x" });
    expect(mergePages([], 5)).toEqual({ runs: [], next: null });
  });

  it("merging pending approvals: oldest first, at most the bound, truncated when any shard was", () => {
    const ap = (run_id: string, id: string, created_at: number) => ({ run_id, run_worker: "w", id, tool: "t", worker_chain: [], created_at, expires_at: 0 });
    const merged = mergeApprovals(
      [
        { approvals: [ap("r2", "a", 1), ap("r9", "z", 3)], truncated: false },
        { approvals: [ap("r1", "b", 1), ap("r1", "a", 2)], truncated: false },
      ],
      3,
    );
    expect(merged).toEqual({ approvals: [ap("r1", "b", 1), ap("r2", "a", 1), ap("r1", "a", 2)], truncated: true });
    expect(mergeApprovals([{ approvals: [], truncated: true }]).truncated).toBe(true);
  });
});
