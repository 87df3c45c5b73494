import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { testRunIndex } from "../support/test-objects";
import type { RunSummary } from "../../src/runs/index-types";
import type { RunStatusName } from "../../src/runs/types";
import { effectUrl, script, settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token" };
const get = async (path: string) => {
  const res = await exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
  return { status: res.status, body: (await res.json()) as any };
};
const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());

const summary = (i: number, worker: string, status: RunStatusName, created_at: number): RunSummary => ({
  id: `idx-${String(i).padStart(3, "0")}`,
  worker,
  status,
  trigger: i % 2 ? { kind: "webhook", name: "github-issues" } : { kind: "api" },
  attributes: {},
  created_at,
  updated_at: created_at,
  usage: { requests: i, inputTokens: 0, outputTokens: 0, costUsd: 0 },
  version: 1,
  pending: [],
});

/** Pages through GET /runs with a query to the end; `between` runs before each next page. */
async function pageAll(query: string, between: () => Promise<void> = async () => {}) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const { status, body } = await get(`/runs?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(status).toBe(200);
    ids.push(...body.runs.map((r: { id: string }) => r.id));
    cursor = body.next_cursor;
    await between();
  } while (cursor);
  return ids;
}

describe("GET /runs", () => {
  it("120 runs across 3 workers and 4 statuses: filtered and paged to the end, none missing or repeated, while new runs arrive", async () => {
    const workers = ["lw-a", "lw-b", "lw-c"];
    const statuses: RunStatusName[] = ["running", "awaiting_approval", "succeeded", "failed"];
    const base = Date.UTC(2026, 0, 1);
    // Timestamps collide in fives, so the (created_at, id) tie-break is exercised.
    const all = Array.from({ length: 120 }, (_, i) => summary(i, workers[i % 3]!, statuses[i % 4]!, base + Math.floor(i / 5) * 1000));
    for (const s of all) expect(await testRunIndex(env).upsert(s)).toEqual({ applied: true });
    const newestFirst = (xs: RunSummary[]) => [...xs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((s) => s.id);
    const ours = (ids: string[]) => ids.filter((id) => id.startsWith("idx-") && !id.startsWith("idx-new"));

    // New runs arrive between pages: they sort before the cursor, so the pages of the older ones never shift.
    let n = 0;
    const arrive = async () => {
      await testRunIndex(env).upsert({ ...summary(900 + n, "lw-a", "running", Date.now()), id: `idx-new-${n++}` });
    };
    const everything = await pageAll(`since=${base}&limit=7`, arrive);
    expect(ours(everything)).toEqual(newestFirst(all));

    for (const w of workers) expect(ours(await pageAll(`worker=${w}&since=${base}&limit=9`, arrive))).toEqual(newestFirst(all.filter((s) => s.worker === w)));
    for (const st of statuses) expect(ours(await pageAll(`status=${st}&since=${base}&limit=8`))).toEqual(newestFirst(all.filter((s) => s.status === st)));
    const combined = await pageAll(`worker=lw-b&status=failed&trigger=github-issues&since=${base}&limit=2`);
    expect(combined).toEqual(newestFirst(all.filter((s) => s.worker === "lw-b" && s.status === "failed" && s.trigger.name === "github-issues")));
    expect(combined.length).toBeGreaterThan(0);
    expect(ours(await pageAll(`trigger=api&since=${base}&limit=50`))).toEqual(newestFirst(all.filter((s) => s.trigger.kind === "api")));
    const later = base + 20_000;
    expect(ours(await pageAll(`since=${new Date(later).toISOString()}&limit=50`))).toEqual(newestFirst(all.filter((s) => s.created_at >= later)));

    const { body } = await get(`/runs?worker=lw-c&since=${base}&limit=1`);
    expect(body.runs[0]).toEqual({
      id: "idx-119",
      worker: "lw-c",
      status: "failed",
      trigger: { kind: "webhook", name: "github-issues" },
      attributes: {},
      created_at: base + 23_000,
      updated_at: base + 23_000,
      usage: { requests: 119, inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
  });

  it("an older or repeated report never overwrites a newer one", async () => {
    const s = summary(500, "lw-a", "succeeded", Date.now());
    await testRunIndex(env).upsert({ ...s, version: 5 });
    expect(await testRunIndex(env).upsert({ ...s, status: "running", version: 4 })).toEqual({ applied: false });
    expect(await testRunIndex(env).upsert({ ...s, status: "running", version: 5 })).toEqual({ applied: false });
    expect((await get(`/runs?worker=lw-a&status=succeeded&limit=200`)).body.runs.map((r: { id: string }) => r.id)).toContain(s.id);
  });

  it("bad query parameters are refused with 400 naming the parameter; the API token is required", async () => {
    for (const [q, path] of [
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["status=done", "status"],
      ["cursor=nope", "cursor"],
      ["since=yesterday", "since"],
      ["worker=a%20b", "worker"],
      ["color=red", "(root)"],
    ] as const) {
      const { status, body } = await get(`/runs?${q}`);
      expect(status, q).toBe(400);
      expect(
        body.issues.map((i: { path: string }) => i.path),
        q,
      ).toContain(path);
    }
    expect((await exports.default.fetch(new Request("https://edgework.test/runs"))).status).toBe(401);
    expect((await exports.default.fetch(new Request("https://edgework.test/approvals?status=pending"))).status).toBe(401);
    expect((await get("/approvals?status=decided")).status).toBe(400);
  });

  it("real runs land in the index: created, then finished with their usage", async () => {
    await script("index-a", [{ text: "done" }]);
    const res = await exports.default.fetch(
      new Request("https://edgework.test/runs", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ worker: "index-a", input: "x" }),
      }),
    );
    const { id } = (await res.json()) as { id: string };
    await vi.waitFor(async () =>
      expect((await get("/runs?worker=index-a")).body.runs).toEqual([expect.objectContaining({ id, status: "queued", trigger: { kind: "api" } })]),
    );
    const done = await settle(id);
    await vi.waitFor(async () =>
      expect((await get("/runs?worker=index-a")).body.runs).toEqual([
        {
          id,
          worker: "index-a",
          status: "succeeded",
          trigger: { kind: "api" },
          attributes: {},
          created_at: done.created_at,
          updated_at: done.updated_at,
          usage: done.usage,
        },
      ]),
    );
  });
});

describe("GET /approvals?status=pending", () => {
  it("lists exactly the pending approvals across runs; a decided one leaves the list", async () => {
    const post = (run: string, n: number) => ({ id: `c${n}`, name: "fx_fetch", arguments: { url: effectUrl(`${run}-${n}`), method: "POST" } });
    await script("index-b", [{ tool_calls: [post("ap-1", 1), post("ap-1", 2)] }, { text: "done" }]);
    await stub("ap-1").start({ id: "ap-1", worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const one = await settle("ap-1");
    await script("index-b", [{ tool_calls: [post("ap-2", 1)] }, { text: "done" }]);
    await stub("ap-2").start({ id: "ap-2", worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const two = await settle("ap-2");
    const expected = [...one.approvals.map((a) => ({ ...a, run: "ap-1" })), ...two.approvals.map((a) => ({ ...a, run: "ap-2" }))].map((a) => ({
      run_id: a.run,
      approval_id: a.id,
      tool: "fx_fetch",
      worker_chain: ["index-b"],
      created_at: a.created_at,
      expires_at: a.expires_at,
    }));
    const listed = async () => ((await get("/approvals?status=pending")).body.approvals as any[]).filter((a) => a.run_id.startsWith("ap-"));
    await vi.waitFor(async () => expect(await listed()).toHaveLength(3));
    const rows = await listed();
    expect(
      rows
        .map(({ run_id, approval_id, tool, worker_chain, created_at, expires_at }) => ({ run_id, approval_id, tool, worker_chain, created_at, expires_at }))
        .sort((a, b) => a.approval_id.localeCompare(b.approval_id)),
    ).toEqual(expected.sort((a, b) => a.approval_id.localeCompare(b.approval_id)));
    for (const r of rows) {
      expect(r.worker).toBe("index-b");
      expect(r.age_seconds).toBeGreaterThanOrEqual(0);
      expect(r.expires_in_seconds).toBeGreaterThan(6 * 86_400);
      expect(r).not.toHaveProperty("args");
    }
    expect((await get("/approvals")).body.approvals.length).toBeGreaterThanOrEqual(3); // status=pending is the default

    const decided = two.approvals[0]!;
    await stub("ap-2").decide(decided.id, { decision: "reject", by: "test" });
    await vi.waitFor(async () => expect((await listed()).map((a) => a.approval_id).sort()).toEqual(one.approvals.map((a) => a.id).sort()));
    // Cancelling a run voids its approvals: they leave too.
    await stub("ap-1").cancel();
    await vi.waitFor(async () => expect(await listed()).toEqual([]));
  });
});

describe("the index never blocks or fails a run", () => {
  it("an index write that throws does not fail the run; the report is re-sent at the alarm it pulls near, and the index converges", async () => {
    await script("index-a", [{ text: "first" }, { text: "second" }]);
    // Once: the run's first report (queued) fails; the next ones carry the whole state.
    await testRunIndex(env).failNextUpserts(1);
    await stub("fail-once").start({ id: "fail-once", worker: "index-a", input: { input: "x" }, approvalMode: "ask", budget: {} });
    expect((await settle("fail-once")).status).toBe("succeeded");
    await vi.waitFor(async () =>
      expect((await get("/runs?worker=index-a&status=succeeded")).body.runs.map((r: { id: string }) => r.id)).toContain("fail-once"),
    );

    // The index down for the whole run: the run still succeeds, and its alarm is pulled to the retry.
    await testRunIndex(env).failNextUpserts(1000);
    await stub("fail-all").start({ id: "fail-all", worker: "index-a", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const done = await settle("fail-all");
    expect(done.status).toBe("succeeded");
    await vi.waitFor(async () => expect(await alarmOf("fail-all")).toBeLessThan(done.updated_at + 86_400_000));
    expect((await get("/runs?worker=index-a")).body.runs.map((r: { id: string }) => r.id)).not.toContain("fail-all");

    await testRunIndex(env).failNextUpserts(0);
    expect(await runDurableObjectAlarm(env.RUNS.getByName("fail-all"))).toBe(true);
    expect((await get("/runs?worker=index-a")).body.runs.find((r: { id: string }) => r.id === "fail-all")).toMatchObject({
      status: "succeeded",
      usage: done.usage,
    });
    // Converged: the run's one alarm is retention's again, and the run is untouched.
    expect(await alarmOf("fail-all")).toBe(done.updated_at + 30 * 86_400_000);
    expect(await stub("fail-all").status()).toMatchObject({ status: "succeeded", output: "second" });
  });
});
