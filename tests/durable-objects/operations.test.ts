import { listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { OperationView } from "../../src/operations/api";
import { testOperation } from "../support/test-operation";
import { testRunIndex } from "../support/test-objects";
import { settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(`https://edgework.test${path}`, {
      method: "POST",
      headers: { ...auth, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
const get = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));

/** Starts `n` live runs (fn-napper sleeps an hour) with `attributes`, 25 at a time; their ids. */
async function napping(prefix: string, n: number, attributes: Record<string, string>): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, "0")}`);
  for (let i = 0; i < ids.length; i += 25) {
    await Promise.all(ids.slice(i, i + 25).map((id) => stub(id).start({ id, worker: "fn-napper", input: {}, approvalMode: "ask", budget: {}, attributes })));
  }
  return ids;
}

/** Until the index lists `n` runs with `attributes`. */
const indexed = (attributes: Record<string, string>, n: number) =>
  vi.waitFor(
    async () => {
      let count = 0;
      let after: { created_at: number; id: string } | undefined;
      do {
        const page = await testRunIndex(env).listRuns({ attributes, limit: 200, after });
        count += page.runs.length;
        after = page.next ?? undefined;
      } while (after);
      expect(count).toBe(n);
    },
    { timeout: 20_000, interval: 200 },
  );

/** One alarm of the operation (a new stub each time: a restart leaves the old one broken); false once none is set. */
const step = async (id: string) => {
  try {
    return await runDurableObjectAlarm(env.OPERATIONS.getByName(id));
  } catch {
    return true; // the object was cut off: the next stub finds it re-armed
  }
};
const viewOf = async (id: string) => (await (await get(`/operations/${id}`)).json()) as OperationView;
const statusOf = async (ids: string[]) => Promise.all(ids.map(async (id) => (await stub(id).status())!.status));

describe("POST /operations", () => {
  // At 1,000 runs under wrangler dev, with a restart of the whole process: tests/e2e/bulk-cancel.test.ts (the pool holds every object in one isolate).
  it("a bulk cancel completes across a restart between batches and one mid-batch, once per run, touching no run outside the filter", async () => {
    const matching = await napping("bulk", 160, { batch: "b-160" });
    const others = await napping("bulk-other", 30, { batch: "b-other" });
    await indexed({ batch: "b-160" }, 160);

    const res = await post("/operations", { action: "cancel", filter: { attributes: { batch: "b-160" } } });
    expect(res.status).toBe(202);
    const { id, status_url } = (await res.json()) as { id: string; status_url: string };
    expect(status_url).toBe(`https://edgework.test/operations/${id}`);
    // Created after the operation began: never touched, though it matches.
    const late = await napping("bulk-late", 1, { batch: "b-160" });

    const before = await testOperation(env, id).storageStats();
    let alarms = 0;
    for (; alarms < 30 && (await step(id)); alarms++) {
      if (alarms === 1)
        await testOperation(env, id)
          .restart()
          .catch(() => {});
      if (alarms === 3) await testOperation(env, id).cutOffAfter(7);
    }
    const view = await viewOf(id);
    expect(view).toMatchObject({ status: "done", counts: { done: 160, failed: 0, skipped: 0 }, failures: [] });
    // 7 pages (6 of 25, one of 10), the one cut off taken up again, and the done operation's one alarm: its deletion
    // after the retention (run early here: it keeps the operation, which is not due).
    expect(alarms).toBe(9);
    expect(new Set(await statusOf(matching))).toEqual(new Set(["cancelled"]));
    expect(new Set(await statusOf([...others, ...late]))).not.toContain("cancelled");
    const after = await testOperation(env, id).storageStats();
    console.log("operation object rows (160 runs, since its last restart):", JSON.stringify({ alarms, after, before }));
    expect((await get(`/operations/${id}`)).status).toBe(200);
  }, 120_000);

  it("costs, per run cancelled: the operation's rows, the index's listing rows, the run's own cancel (measured, for BENCHMARKS.md)", async () => {
    const runs = await napping("cost", 100, { batch: "cost" });
    await indexed({ batch: "cost" }, 100);
    const { id } = (await (await post("/operations", { action: "cancel", filter: { attributes: { batch: "cost" } } })).json()) as { id: string };
    const index0 = await testRunIndex(env).storageStats();
    const run0 = await stub(runs[0]!).storageStats();
    let alarms = 0;
    while (await step(id)) alarms++;
    const op = await testOperation(env, id).storageStats();
    const index1 = await testRunIndex(env).storageStats();
    const run1 = await stub(runs[0]!).storageStats();
    expect(await viewOf(id)).toMatchObject({ status: "done", counts: { done: 100 } });
    // Per page of 25: the batch in hand written, then its outcomes and the cursor: no row per run.
    expect(op.rowsWritten).toBeLessThan(20);
    console.log(
      "bulk cancel of 100 runs:",
      JSON.stringify({
        alarms,
        operation: op,
        index_rows_read_incl_reports: index1.rowsRead - index0.rowsRead,
        index_reports: index1.reports - index0.reports,
        one_run: { rowsRead: run1.rowsRead - run0.rowsRead, rowsWritten: run1.rowsWritten - run0.rowsWritten },
      }),
    );
  });

  it("a dry run lists what it would touch, with what it would skip, and makes no operation", async () => {
    const live = await napping("dry-live", 3, { batch: "dry" });
    await stub("dry-ended").start({ id: "dry-ended", worker: "fn-shout", input: { kind: "x" }, approvalMode: "ask", budget: {}, attributes: { batch: "dry" } });
    await settle("dry-ended");
    await indexed({ batch: "dry" }, 4);
    const objects = (await listDurableObjectIds(env.OPERATIONS)).length;
    const res = await post("/operations", { action: "cancel", filter: { attributes: { batch: "dry" } }, dry_run: true });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { dry_run: true; runs: Array<{ id: string; skip?: string }>; truncated: boolean };
    expect(body.truncated).toBe(false);
    expect(body.runs.map((r) => r.id).sort()).toEqual([...live, "dry-ended"].sort());
    expect(body.runs.find((r) => r.id === "dry-ended")!.skip).toBe("the run already succeeded");
    expect(body.runs.filter((r) => r.skip)).toHaveLength(1);
    expect((await listDurableObjectIds(env.OPERATIONS)).length).toBe(objects);
    expect(new Set(await statusOf(live))).not.toContain("cancelled");
  });

  it("a cancel filtered by status acts only on runs still in that status: an index that lags (it lists them awaiting approval) cancels none that moved on", async () => {
    const runs = await napping("lag", 3, { batch: "lag" });
    await indexed({ batch: "lag" }, 3);
    // The index says awaiting_approval (as it did before a person approved); the runs are queued.
    const listed = (await testRunIndex(env).listRuns({ attributes: { batch: "lag" }, limit: 10 })).runs;
    for (const r of listed) {
      await testRunIndex(env).upsert({ ...r, status: "awaiting_approval", usage: null, version: 1_000_000, pending: [] });
    }
    const { id } = (await (await post("/operations", { action: "cancel", filter: { attributes: { batch: "lag" }, status: "awaiting_approval" } })).json()) as {
      id: string;
    };
    while (await step(id));
    const view = await viewOf(id);
    expect(view).toMatchObject({ status: "done", counts: { done: 0, skipped: 3 } });
    expect(JSON.stringify(view.failures)).not.toContain("cancelled");
    expect(new Set(await statusOf(runs))).toEqual(new Set(["queued"]));
  });

  it("cancelled mid-way, it acts on no run after; what it did stays counted", async () => {
    const runs = await napping("halt", 60, { batch: "halt" });
    await indexed({ batch: "halt" }, 60);
    const { id } = (await (await post("/operations", { action: "cancel", filter: { attributes: { batch: "halt" }, status: "queued" } })).json()) as {
      id: string;
    };
    await step(id);
    const cancelled = (await (await post(`/operations/${id}/cancel`)).json()) as OperationView;
    expect(cancelled).toMatchObject({ status: "cancelled", counts: { done: 25 } });
    expect(cancelled.finished_at).not.toBeNull();
    await step(id); // its retention alarm, early: nothing happens
    expect((await statusOf(runs)).filter((s) => s === "cancelled")).toHaveLength(25);
    expect(await viewOf(id)).toMatchObject({ status: "cancelled", counts: { done: 25, failed: 0, skipped: 0 } });
  });

  it("a cancel landing while a batch awaits its runs: no run is started after it, those acted on are counted, the cursor stays", async () => {
    const runs = await napping("mid", 25, { batch: "mid" });
    await indexed({ batch: "mid" }, 25);
    const { id } = (await (await post("/operations", { action: "cancel", filter: { attributes: { batch: "mid" } } })).json()) as { id: string };
    await testOperation(env, id).cancelAfterActs(6);
    await step(id);
    const view = await viewOf(id);
    expect(view.status).toBe("cancelled");
    // The five in flight when it landed finish; none starts after.
    const acted = (await statusOf(runs)).filter((s) => s === "cancelled").length;
    expect(acted).toBeGreaterThanOrEqual(6);
    expect(acted).toBeLessThanOrEqual(6 + 4);
    expect(view.counts.done).toBe(acted);
    await step(id); // its retention alarm, early: nothing
    expect((await statusOf(runs)).filter((s) => s === "cancelled")).toHaveLength(acted);
  });

  it("fork re-runs each failed run from its start on the current definitions, once however often its batch is taken up, keeping its attributes", async () => {
    const failed = ["fk-1", "fk-2", "fk-3"];
    for (const id of failed) {
      await stub(id).start({ id, worker: "fn-shout", input: { kind: "" }, approvalMode: "ask", budget: {}, attributes: { batch: "forks" } });
      expect((await settle(id)).status).toBe("failed");
    }
    await vi.waitFor(async () =>
      expect((await testRunIndex(env).listRuns({ attributes: { batch: "forks" }, status: "failed", limit: 10 })).runs).toHaveLength(3),
    );
    const { id } = (await (
      await post("/operations", { action: "fork", filter: { attributes: { batch: "forks" }, status: "failed" }, definitions: "current" })
    ).json()) as {
      id: string;
    };
    await testOperation(env, id).cutOffAfter(2);
    while (await step(id));
    expect(await viewOf(id)).toMatchObject({ status: "done", counts: { done: 3, failed: 0, skipped: 0 } });
    await vi.waitFor(async () => {
      const forks = (await testRunIndex(env).listRuns({ attributes: { batch: "forks" }, trigger: "fork", limit: 10 })).runs;
      expect(forks.map((f) => f.trigger.name).sort()).toEqual(failed);
    });
    const fork = (await testRunIndex(env).listRuns({ attributes: { batch: "forks" }, trigger: "fork", limit: 10 })).runs[0]!;
    expect((await stub(fork.id).status())!).toMatchObject({ forked_from: { at: "" }, attributes: { batch: "forks" }, input: { kind: "" } });
  });

  it("resume re-arms the runs it can; those with nothing to resume are skipped with why", async () => {
    const [live] = await napping("rs-live", 1, { batch: "resume" });
    await stub("rs-done").start({ id: "rs-done", worker: "fn-shout", input: { kind: "x" }, approvalMode: "ask", budget: {}, attributes: { batch: "resume" } });
    await settle("rs-done");
    await indexed({ batch: "resume" }, 2);
    const { id } = (await (await post("/operations", { action: "resume", filter: { attributes: { batch: "resume" } } })).json()) as { id: string };
    while (await step(id));
    expect(await viewOf(id)).toMatchObject({ status: "done", counts: { done: 1, skipped: 1, failed: 0 } });
    expect((await stub(live!).status())!.status).toBe("queued");
  });

  it("an Idempotency-Key names one operation; hostile bodies and ids are refused and make nothing", async () => {
    const body = { action: "cancel", filter: { worker: "fn-napper", status: "waiting" } };
    const first = await post("/operations", body, { "Idempotency-Key": "op-key-1" });
    expect(first.status).toBe(202);
    const again = await post("/operations", body, { "Idempotency-Key": "op-key-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await again.json()) as { id: string }).id).toBe(((await first.json()) as { id: string }).id);
    expect((await post("/operations", { ...body, action: "resume" }, { "Idempotency-Key": "op-key-1" })).status).toBe(422);
    // A run's key that spells the operation's ledger name is a run's key: it starts a run (review 4).
    const run = await post("/runs", { worker: "fn-shout", input: { kind: "x" } }, { "Idempotency-Key": "operation:op-key-1" });
    expect(run.status).toBe(202);

    const objects = (await listDurableObjectIds(env.OPERATIONS)).length;
    for (const [bad, path] of [
      [{ action: "cancel", filter: {} }, "filter"],
      [{ action: "cancel", filter: { since: 0 } }, "filter"],
      [{ action: "delete", filter: { status: "failed" } }, "action"],
      [{ action: "cancel", filter: { status: "failed" }, definitions: "current" }, "definitions"],
      [{ action: "cancel", filter: { attributes: { "Bad Name": "x" } } }, "filter.attributes.Bad Name"],
      [{ action: "cancel", filter: { attributes: { a: "1", b: "2", c: "3", d: "4" } } }, "filter.attributes"],
      [{ action: "cancel", filter: { attributes: { repo: "x\u0000" } } }, "filter.attributes.repo"],
      [{ action: "cancel", filter: { worker: "'; DROP TABLE runs; --" } }, "filter.worker"],
      [{ action: "cancel", filter: { status: "failed", extra: 1 } }, "filter"],
      [{ action: "cancel", filter: { status: "failed" }, dry_run: "yes" }, "dry_run"],
    ] as const) {
      const res = await post("/operations", bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(
        ((await res.json()) as { issues: Array<{ path: string }> }).issues.map((i) => i.path),
        JSON.stringify(bad),
      ).toContain(path);
    }
    expect((await post("/operations", "not json")).status).toBe(400);
    expect((await listDurableObjectIds(env.OPERATIONS)).length).toBe(objects);
    for (const bad of ["nope", "op-1", `op-${"0".repeat(36)}`, "op-00000000-0000-0000-0000-000000000000"]) {
      expect((await get(`/operations/${bad}`)).status, bad).toBe(404);
      expect((await post(`/operations/${bad}/cancel`)).status, bad).toBe(404);
    }
    expect((await exports.default.fetch(new Request("https://edgework.test/operations", { method: "POST", body: "{}" }))).status).toBe(401);
  });
});
