import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { testRunIndex } from "../support/test-objects";
import { effectUrl, script, settle, stub } from "./helpers";

const DAY = 86_400_000;
const object = (id: string) => env.RUNS.getByName(id);
const alarmOf = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());
/** The run's SQLite: bytes and rows in its tables. */
const storageOf = (id: string) =>
  runInDurableObject(object(id), (_o, state) => {
    const tables = state.storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .toArray();
    const rows = tables.reduce((n, t) => n + (state.storage.sql.exec(`SELECT count(*) AS n FROM "${t.name}"`).one().n as number), 0);
    return { bytes: state.storage.sql.databaseSize, tables: tables.length, rows };
  });
/** Moves the run's finish back by `days`, as if that much time had passed (a run's finish is its ending event; older objects': their row). */
const age = (id: string, days: number) =>
  runInDurableObject(object(id), (_o, state) => {
    state.storage.sql.exec("UPDATE run SET updated_at = updated_at - ?", days * DAY);
    state.storage.sql.exec("UPDATE events SET at = at - ?", days * DAY);
  });
const getRun = async (id: string) => {
  const res = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}`, { headers: { Authorization: "Bearer test-token" } }));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("retention (RUN_RETENTION_DAYS, default 30)", () => {
  it("a finished run deletes all its storage at its retention alarm, leaves the index, and GET /runs/:id says why it is gone", async () => {
    const id = "ret-finished";
    await script("index-a", [{ text: "done" }]);
    await stub(id).start({ id, worker: "index-a", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const done = await settle(id);
    expect(done.status).toBe("succeeded");
    expect(await alarmOf(id)).toBe(done.updated_at + 30 * DAY);
    await vi.waitFor(async () => expect((await testRunIndex(env).listRuns({ worker: "index-a", limit: 200 })).runs.map((r) => r.id)).toContain(id));
    const before = await storageOf(id);
    expect(before.rows).toBeGreaterThan(0);

    // An alarm before the time (e.g. one pulled in by an index retry) deletes nothing and re-arms.
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    expect((await stub(id).status())?.status).toBe("succeeded");
    expect(await alarmOf(id)).toBe(done.updated_at + 30 * DAY);

    await age(id, 30);
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    const after = await storageOf(id);
    expect(after).toMatchObject({ tables: 0, rows: 0 });
    expect(after.bytes).toBeLessThan(before.bytes);
    expect(await alarmOf(id)).toBeNull();
    console.log(`retention: storage of a finished one-turn run ${before.bytes} bytes / ${before.rows} rows → ${after.bytes} bytes / ${after.rows} rows`);

    expect((await testRunIndex(env).listRuns({ worker: "index-a", limit: 200 })).runs.map((r) => r.id)).not.toContain(id);
    const gone = await getRun(id);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatch(/^run "ret-finished" was deleted on .*: finished runs are retained for 30 days \(RUN_RETENTION_DAYS\)/);
    expect(await getRun("ret-never-existed")).toEqual({ status: 404, body: { error: 'unknown run "ret-never-existed"' } });

    // A replayed delivery of the same id (signatures carry no time) starts nothing, also in a fresh instance.
    expect(await stub(id).start({ id, worker: "index-a", input: { input: "x" }, approvalMode: "ask", budget: {} })).toEqual({
      id,
      status: "succeeded",
      created: false,
    });
    await runInDurableObject(object(id), (_o, state) => state.abort("evicted")).catch((err: { durableObjectReset?: boolean }) =>
      expect(err.durableObjectReset).toBe(true),
    );
    expect(await stub(id).start({ id, worker: "index-a", input: { input: "x" }, approvalMode: "ask", budget: {} })).toMatchObject({ created: false });
    expect(await stub(id).status()).toBeNull();
    expect(await alarmOf(id)).toBeNull();
  });

  it("a paused run is never deleted, however old; a cancelled one is, after its retention", async () => {
    const id = "ret-paused";
    await script("index-b", [{ tool_calls: [{ id: "p", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "done" }]);
    await stub(id).start({ id, worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    // Its alarm stays the approval's expiry, never a deletion.
    expect(await alarmOf(id)).toBe(paused.approvals[0]!.expires_at);
    await age(id, 365);
    await runDurableObjectAlarm(object(id));
    expect(await stub(id).status()).toMatchObject({ status: "awaiting_approval", approvals: [{ status: "pending" }] });
    expect((await storageOf(id)).rows).toBeGreaterThan(0);

    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelled" });
    const cancelled = (await stub(id).status())!;
    expect(await alarmOf(id)).toBe(cancelled.updated_at + 30 * DAY);
    await age(id, 30);
    await runDurableObjectAlarm(object(id));
    expect(await storageOf(id)).toMatchObject({ tables: 0, rows: 0 });
    expect((await getRun(id)).status).toBe(404);
  });
});
