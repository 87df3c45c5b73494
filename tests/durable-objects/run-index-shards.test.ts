import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { indexObjects, indexShardOf, LEGACY_INDEX, RUN_INDEX_SHARDS } from "../../src/runs/index-shards";
import type { RunSummary } from "../../src/runs/index-types";
import { runIndexObject } from "../../src/runs/rpc";
import type { RunStatusName } from "../../src/runs/types";
import { testRunIndex } from "../support/test-objects";
import { effectUrl, script, settle, stub } from "./helpers";
import { approvedRun } from "./hot-path";

/**
 * The run index spread over shards (src/runs/index-shards.ts, issue 32 item 2): listings merge every
 * shard and the legacy single index into the one order and paging the single index gave; a run's
 * start, pause and finish reach only its own shard.
 */

const auth = { Authorization: "Bearer test-token" };
const get = async (path: string) => {
  const res = await exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
  return { status: res.status, body: (await res.json()) as any };
};

const summary = (i: number, worker: string, status: RunStatusName, created_at: number, attributes: Record<string, string>): RunSummary => ({
  id: `sh-${String(i).padStart(4, "0")}`,
  worker,
  status,
  trigger: i % 2 ? { kind: "webhook", name: "github-issues" } : { kind: "api" },
  attributes,
  created_at,
  updated_at: created_at,
  usage: { requests: i, inputTokens: 0, outputTokens: 0, costUsd: 0 },
  version: 1,
  pending: [],
});

async function pageAll(query: string) {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const { status, body } = await get(`/runs?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(status).toBe(200);
    ids.push(...body.runs.map((r: { id: string }) => r.id));
    cursor = body.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

const newestFirst = (xs: RunSummary[]) => [...xs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((s) => s.id);

describe("listing across shards", () => {
  it("400 runs in every shard and the legacy index: each filter paged to the end in the single index's order, each run once", async () => {
    const base = Date.UTC(2025, 5, 1);
    const workers = ["sh-a", "sh-b"];
    const statuses: RunStatusName[] = ["running", "succeeded", "failed", "awaiting_approval"];
    // Timestamps collide in sevens across shards: the (created_at, id) tie-break decides between shards.
    const all = Array.from({ length: 400 }, (_, i) =>
      summary(i, workers[i % 2]!, statuses[i % 4]!, base + Math.floor(i / 7) * 1000, i % 3 ? { team: "core" } : { team: "edge", tier: "gold" }),
    );
    // Every tenth run was indexed before sharding (the legacy object), the rest in the shard of their id.
    const home = (s: RunSummary, i: number) => (i % 10 === 0 ? LEGACY_INDEX : indexShardOf(s.id));
    for (const [i, s] of all.entries()) expect(await runIndexObject(env, home(s, i)).upsert(s)).toEqual({ applied: true });
    expect(new Set(all.map((s, i) => home(s, i))).size).toBe(RUN_INDEX_SHARDS + 1);

    const cases: [string, (s: RunSummary) => boolean][] = [
      [`since=${base}&limit=7`, () => true],
      [`since=${base}&limit=200`, () => true],
      [`since=${base}&limit=1&worker=sh-b&status=failed`, (s) => s.worker === "sh-b" && s.status === "failed"],
      [`since=${base}&limit=9&trigger=github-issues`, (s) => s.trigger.kind === "webhook"],
      [`since=${base}&limit=5&attr.team=edge&attr.tier=gold&status=running`, (s) => s.attributes!.team === "edge" && s.status === "running"],
      [`since=${base + 30_000}&limit=11&attr.team=core`, (s) => s.created_at >= base + 30_000 && s.attributes!.team === "core"],
    ];
    for (const [q, keep] of cases) {
      const { ids, pages } = await pageAll(q);
      const expected = newestFirst(all.filter(keep));
      expect(ids, q).toEqual(expected); // newest first, no gap, no repeat
      expect(new Set(ids).size, q).toBe(ids.length);
      const limit = Number(new URLSearchParams(q).get("limit"));
      expect(pages, q).toBe(Math.max(1, Math.ceil(expected.length / limit)));
    }
  });

  it("pending approvals of every shard and the legacy index, merged oldest first", async () => {
    const at = Date.UTC(2025, 6, 1);
    const runs = Array.from({ length: 12 }, (_, i) => ({
      ...summary(1000 + i, "sh-ap", "awaiting_approval", at + i, {}),
      pending: [{ id: `a${i}`, tool: "fx_fetch", worker_chain: ["sh-ap"], created_at: at + ((i * 5) % 12), expires_at: at + 86_400_000 }],
    }));
    for (const [i, s] of runs.entries()) await runIndexObject(env, i % 4 === 0 ? LEGACY_INDEX : indexShardOf(s.id)).upsert(s);
    const listed = ((await get("/approvals?status=pending")).body.approvals as { run_id: string; approval_id: string; created_at: number }[]).filter((a) =>
      a.run_id.startsWith("sh-1"),
    );
    expect(listed.map((a) => a.approval_id)).toEqual(
      runs
        .map((s) => s.pending[0]!)
        .sort((a, b) => a.created_at - b.created_at)
        .map((p) => p.id),
    );
  });

  it("hostile cursors are refused with 400, naming the cursor; a well-formed one is only a position", async () => {
    for (const cursor of [
      `${"9".repeat(17)}.sh-0001`, // past 16 digits
      `1.${"a".repeat(129)}`, // an id longer than any run id
      "1.a.b",
      "-1.sh-0001",
      "1.sh/0001",
      "index/3:1.sh-0001", // a shard named in it: the cursor has no shard to name
      "{}",
      "",
    ]) {
      const { status, body } = await get(`/runs?cursor=${encodeURIComponent(cursor)}`);
      expect(status, cursor).toBe(400);
      expect(
        body.issues.map((i: { path: string }) => i.path),
        cursor,
      ).toContain("cursor");
    }
    // A cursor made up by hand reads only runs older than it, under the listing's own filters.
    const { status, body } = await get(`/runs?cursor=${Date.UTC(2025, 5, 1) + 3_000}.zzz&worker=sh-a&limit=200`);
    expect(status).toBe(200);
    expect(body.runs.every((r: { worker: string; created_at: number }) => r.worker === "sh-a" && r.created_at <= Date.UTC(2025, 5, 1) + 3_000)).toBe(true);
  });
});

/** Run ids whose shards differ (the hash is fixed: these are found, not assumed). */
function idsInDistinctShards(n: number): string[] {
  const seen = new Set<string>();
  const ids: string[] = [];
  for (let i = 0; ids.length < n; i++) {
    const id = `hot-${i}`;
    if (!seen.has(indexShardOf(id))) {
      seen.add(indexShardOf(id));
      ids.push(id);
    }
  }
  return ids;
}

describe("the hot path touches no shared object", () => {
  it("four runs started, paused for approval and finished: each reaches only its own shard, no object another of them reaches", async () => {
    const ids = idsInDistinctShards(4);
    const touched = new Map<string, string[]>();
    for (const id of ids) {
      const out = await approvedRun(id, true);
      touched.set(id, Object.keys(out));
      // Its reports went to its shard (start, pause, decision, finish), none to the legacy index.
      expect(out[`RUN_INDEX ${indexShardOf(id)}`]).toBeGreaterThanOrEqual(3);
      expect(out[`RUN_INDEX ${LEGACY_INDEX}`]).toBeUndefined();
    }
    for (const a of ids)
      for (const b of ids)
        if (a < b)
          expect(
            touched.get(a)!.filter((o) => touched.get(b)!.includes(o)),
            `${a} and ${b}`,
          ).toEqual([]);
    // The run lands in its shard's rows, not elsewhere.
    for (const id of ids) {
      const held = await Promise.all(
        indexObjects().map((name) =>
          runInDurableObject(env.RUN_INDEX.getByName(name), (_o, state) => state.storage.sql.exec("SELECT 1 FROM runs WHERE id = ?", id).toArray().length),
        ),
      );
      expect(indexObjects().filter((_, k) => held[k])).toEqual([indexShardOf(id)]);
    }
  });

  it("a run queued before sharding (no shard kept) is paused, evicted, approved under this version and still reports to the legacy index", async () => {
    const id = "hot-legacy";
    await script("index-b", [{ tool_calls: [{ id: "c1", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "done" }]);
    // Started as the version before sharding ran it (the test pool's runs report to the legacy index) ...
    await stub(id).start({ id, worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    await vi.waitFor(async () =>
      expect((await testRunIndex(env).listRuns({ worker: "index-b", limit: 200 })).runs.find((r) => r.id === id)).toMatchObject({
        status: "awaiting_approval",
      }),
    );
    // ... whose object keeps no shard (that version wrote none); then deployed (evicted) while paused.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => void state.storage.kv.delete("index_home"));
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("deployed")).catch(() => {});
    const before = (await testRunIndex(env).storageStats()).reports;
    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
    expect((await settle(id)).status).toBe("succeeded");
    await vi.waitFor(async () =>
      expect((await testRunIndex(env).listRuns({ worker: "index-b", limit: 200 })).runs.find((r) => r.id === id)).toMatchObject({ status: "succeeded" }),
    );
    expect((await testRunIndex(env).storageStats()).reports).toBeGreaterThan(before);
    // Listed once: no shard holds it.
    expect((await get(`/runs?worker=index-b&limit=200`)).body.runs.filter((r: { id: string }) => r.id === id)).toHaveLength(1);
    for (const name of indexObjects().filter((n) => n !== LEGACY_INDEX))
      expect(
        (await runIndexObject(env, name).listRuns({ worker: "index-b", limit: 200 })).runs.map((r) => r.id),
        name,
      ).not.toContain(id);
  });
});
