import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { STUCK_AFTER_MS } from "../../durable-objects/run-sweep";
import { SWEEP_WAKE_UPS } from "../../durable-objects/run/sweep";
import type { RunSummary } from "../../src/runs/index-types";
import { SOON_MS, testRunIndex, type TestRunIndexRpc } from "../support/test-objects";
import { effectCount, effectUrl, script, settle, stub } from "./helpers";
import { alarmOf, landAt, object } from "./interleave";

/**
 * Runs the platform leaves stuck (issue 29 items 3 and 6): an activation ended past a CPU,
 * memory or wall-time limit runs no catch; the platform retries it, then drops its alarm, and
 * the run sits queued or running with no alarm. The test pool kills an activation that way
 * (TestRunDO `killActivations`: the object reset at its first step; `runDurableObjectAlarm`
 * then deletes the alarm, as the runtime does after its retries); the run index's sweep
 * (durable-objects/run-sweep.ts, its alarm) finds the run and its object decides
 * (durable-objects/run/sweep.ts). Time passes through the index's clock seam, never by waiting.
 */

const index = () => testRunIndex(env);
const indexObject = () => env.RUN_INDEX.getByName("index");
/** One sweep: the index's alarm (set while it lists a queued or running run). */
const sweep = () => runDurableObjectAlarm(indexObject());

/** A run of stuck-writer that posts one counted effect, then answers. */
async function start(id: string) {
  await script("stuck-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: `done ${id}` }]);
  await stub(id).start({ id, worker: "stuck-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  // The index has heard of it (its reports go out after each change, never awaited by the run).
  await vi.waitFor(async () => expect((await index().listRuns({ worker: "stuck-writer", limit: 100 })).runs.map((r) => r.id)).toContain(id));
}

/** Runs the run's alarm, which the test pool kills (the alarm then deleted): true if it was killed. */
async function killedActivation(id: string): Promise<boolean> {
  try {
    await runDurableObjectAlarm(object(id));
    return false;
  } catch (err) {
    expect((err as { durableObjectReset?: boolean }).durableObjectReset).toBe(true);
    return true;
  }
}

const eventsOf = (id: string, type: string) =>
  runInDurableObject(object(id), (_o, state) =>
    state.storage.sql
      .exec<{ data: string }>("SELECT data FROM events WHERE type = ? ORDER BY seq", type)
      .toArray()
      .map((r) => JSON.parse(r.data) as Record<string, unknown>),
  );

/** What the run's object wrote, and the alarms it set, across `fn` (its own counters: TestRunDO `storageStats`). */
async function writesDuring(id: string, fn: () => Promise<unknown>) {
  const before = await stub(id).storageStats();
  const events = (await stub(id).eventsSince("0-0", 1000))!.events.length;
  const alarm = await alarmOf(id);
  await fn();
  const after = await stub(id).storageStats();
  return {
    rowsWritten: after.rowsWritten - before.rowsWritten,
    alarmsSet: after.alarmsSet - before.alarmsSet,
    events: (await stub(id).eventsSince("0-0", 1000))!.events.length - events,
    alarmMoved: (await alarmOf(id)) !== alarm,
  };
}

describe("the stuck-run sweep", () => {
  it("a run whose alarm the platform dropped (its activation killed) is found by the sweep and finishes, its effect made once", async () => {
    const id = "stuck-once";
    await start(id);
    await stub(id).killActivations(1);
    expect(await killedActivation(id)).toBe(true);
    // What the platform leaves: running, no alarm, nothing to find it.
    expect((await stub(id).status())!.status).toBe("running");
    expect(await alarmOf(id)).toBeNull();
    // Not yet: the index heard of it within STUCK_AFTER_MS.
    expect(await sweep()).toBe(true);
    expect(await eventsOf(id, "run_swept")).toEqual([]);
    await index().advanceClock(STUCK_AFTER_MS + 1);
    expect(await sweep()).toBe(true);
    expect(await eventsOf(id, "run_swept")).toEqual([{ attempt: 1, of: SWEEP_WAKE_UPS }]);
    const alarm = await alarmOf(id);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(Date.now() + SOON_MS);
    const view = await settle(id);
    expect(view).toMatchObject({ status: "succeeded", output: `done ${id}` });
    expect(await effectCount(id)).toBe(1);
  });

  it("a run killed on every activation is woken SWEEP_WAKE_UPS times, then failed `stuck` with the reason", async () => {
    const id = "stuck-always";
    await start(id);
    await stub(id).killActivations(1000);
    await index().advanceClock(STUCK_AFTER_MS + 1);
    for (let n = 1; n <= SWEEP_WAKE_UPS; n++) {
      expect(await killedActivation(id)).toBe(true);
      expect(await alarmOf(id)).toBeNull();
      expect(await sweep()).toBe(true);
      expect((await eventsOf(id, "run_swept")).map((e) => e.attempt)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }
    expect(await killedActivation(id)).toBe(true);
    expect(await sweep()).toBe(true);
    const view = (await stub(id).status())!;
    expect(view.status).toBe("failed");
    expect(view.error).toMatchObject({ code: "stuck" });
    expect(view.error!.message).toContain(`dropped its alarm ${SWEEP_WAKE_UPS + 1} times in a row`);
    expect(view.error!.message).toContain("[limits] cpu_ms");
    expect(view.error!.message).toContain("128 MB");
    // Ended as any failed run: its one alarm is retention's, and the index lists it failed (the sweep brought its summary back).
    expect(await alarmOf(id)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    await vi.waitFor(async () =>
      expect((await index().listRuns({ worker: "stuck-writer", limit: 100 })).runs.find((r) => r.id === id)).toMatchObject({ status: "failed" }),
    );
    // The model was asked never (each activation was killed at its first step), and the next sweeps leave it alone.
    expect(await effectCount(id)).toBe(0);
    expect(await writesDuring(id, sweep)).toEqual({ rowsWritten: 0, alarmsSet: 0, events: 0, alarmMoved: false });
  });

  it("a run killed until the platform drops it, twice, is resumed by the sweep once the kills stop", async () => {
    const id = "stuck-twice";
    await start(id);
    await stub(id).killActivations(2);
    await index().advanceClock(STUCK_AFTER_MS + 1);
    expect(await killedActivation(id)).toBe(true);
    expect(await sweep()).toBe(true);
    expect(await killedActivation(id)).toBe(true);
    expect(await sweep()).toBe(true);
    expect((await eventsOf(id, "run_swept")).map((e) => e.attempt)).toEqual([1, 2]);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: `done ${id}` });
    expect(await effectCount(id)).toBe(1);
  });

  it("a queued run whose first alarm was dropped is found and started", async () => {
    const id = "stuck-queued";
    await start(id);
    await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
    await index().advanceClock(STUCK_AFTER_MS + 1);
    expect(await sweep()).toBe(true);
    expect(await eventsOf(id, "run_swept")).toEqual([{ attempt: 1, of: SWEEP_WAKE_UPS }]);
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
  });

  it("healthy runs are untouched: queued or running with an alarm, running its alarm now, paused, finished (no row written, no alarm moved)", async () => {
    await index().advanceClock(STUCK_AFTER_MS + 1);
    const untouched = { rowsWritten: 0, alarmsSet: 0, events: 0, alarmMoved: false };
    // Queued, its first alarm set. (Each run is driven to its end before the next starts: they share the model's script.)
    await start("healthy-queued");
    expect(await writesDuring("healthy-queued", sweep)).toEqual(untouched);
    expect(await settle("healthy-queued")).toMatchObject({ status: "succeeded" });
    // Running, checkpointed: its next activation armed.
    await start("healthy-running");
    await stub("healthy-running").setTestHooks({ activationBudgetMs: 0 });
    await runDurableObjectAlarm(object("healthy-running"));
    expect((await eventsOf("healthy-running", "run_checkpoint")).length).toBe(1);
    expect((await stub("healthy-running").status())!.status).toBe("running");
    expect(await writesDuring("healthy-running", sweep)).toEqual(untouched);
    expect(await settle("healthy-running")).toMatchObject({ status: "succeeded" });
    // Running its alarm now (held at a model request): no alarm in storage, and still not stuck.
    const running = "healthy-in-alarm";
    await start(running);
    const held = await landAt(running, { point: "model.request" }, () => writesDuring(running, () => stub(running).sweep(0)));
    expect(held).toMatchObject({ reached: true, landed: { rowsWritten: 0, alarmsSet: 0, events: 0 } });
    expect(await settle(running)).toMatchObject({ status: "succeeded" });
    // Paused for approval, and finished: the index asks only about queued and running runs; asked anyway (a stale index), they answer ok.
    const paused = "healthy-paused";
    await script("stuck-writer", [{ tool_calls: [{ name: "gated_fetch", arguments: { url: effectUrl(paused), method: "POST" } }] }]);
    await stub(paused).start({ id: paused, worker: "stuck-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    expect(await settle(paused)).toMatchObject({ status: "awaiting_approval" });
    const finished = "healthy-finished";
    await start(finished);
    expect(await settle(finished)).toMatchObject({ status: "succeeded" });
    for (const id of [paused, finished]) {
      let answer: unknown;
      expect(await writesDuring(id, async () => (answer = await stub(id).sweep(Number.MAX_SAFE_INTEGER)))).toEqual(untouched);
      expect(answer).toEqual({ verdict: "ok" });
    }
  });

  it("a stale index is brought up to date by the sweep: a run it lists as running that finished", async () => {
    const id = "stale-finished";
    await start(id);
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    // The index missed the run's last reports (as if they were lost with an evicted object).
    await runInDurableObject(indexObject(), (_o, state) => state.storage.sql.exec("UPDATE runs SET status = 'running', version = 1 WHERE id = ?", id));
    await index().advanceClock(STUCK_AFTER_MS + 1);
    expect(await sweep()).toBe(true);
    expect((await index().listRuns({ worker: "stuck-writer", limit: 100 })).runs.find((r) => r.id === id)).toMatchObject({ status: "succeeded" });
  });

  it("an index that lists a live run and has no alarm (the runs listed before a deploy that brought the sweep) arms its sweep when it starts", async () => {
    const name = "sweep-after-deploy";
    const other = () => env.RUN_INDEX.getByName(name);
    const at = Date.now();
    await (other() as unknown as TestRunIndexRpc).upsert({
      id: "listed-before",
      worker: "stuck-writer",
      status: "running",
      trigger: { kind: "api" },
      attributes: {},
      created_at: at,
      updated_at: at,
      usage: null,
      version: 2,
      pending: [],
    });
    // As before the deploy: no alarm; then the object starts again (the deploy).
    await runInDurableObject(other(), (_o, state) => state.storage.deleteAlarm());
    await runInDurableObject(other(), (_o, state) => state.abort("the deploy")).catch(() => undefined);
    const alarm = await runInDurableObject(other(), (_o, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
  });

  it("hostile: a run the index lists that does not exist, or that retention deleted, makes no sweep throw or come back to it", async () => {
    const ghost = "stuck-ghost";
    const old = Date.now() - 2 * STUCK_AFTER_MS;
    const listed = (id: string): RunSummary => ({
      id,
      worker: "stuck-writer",
      status: "running",
      trigger: { kind: "api" },
      attributes: {},
      created_at: old,
      updated_at: old,
      usage: null,
      version: 7,
      pending: [{ id: "ap_x", tool: "fx_fetch", worker_chain: ["stuck-writer"], created_at: old, expires_at: old + 1 }],
    });
    expect(await index().upsert(listed(ghost))).toEqual({ applied: true });
    // A run retention deleted (its object keeps only a tombstone), listed again by the index.
    const deleted = "stuck-deleted";
    await start(deleted);
    expect(await settle(deleted)).toMatchObject({ status: "succeeded" });
    await runInDurableObject(object(deleted), (_o, state) => {
      state.storage.sql.exec("UPDATE run SET updated_at = updated_at - ?", 31 * 86_400_000);
      state.storage.sql.exec("UPDATE events SET at = at - ?", 31 * 86_400_000);
    });
    expect(await runDurableObjectAlarm(object(deleted))).toBe(true);
    expect(await stub(deleted).status()).toBeNull();
    await runInDurableObject(indexObject(), (_o, state) => {
      state.storage.sql.exec(
        "INSERT INTO runs (id, worker, status, trigger_kind, created_at, updated_at, version) VALUES (?, 'stuck-writer', 'running', 'api', ?, ?, 3)",
        deleted,
        old,
        old,
      );
    });
    expect(await sweep()).toBe(true);
    const listedNow = (await index().listRuns({ worker: "stuck-writer", limit: 100 })).runs.map((r) => r.id);
    expect(listedNow).not.toContain(ghost);
    expect(listedNow).not.toContain(deleted);
    expect((await index().pendingApprovals()).approvals.filter((a) => a.run_id === ghost)).toEqual([]);
    // Neither object was given a run or an alarm.
    expect(await stub(ghost).status()).toBeNull();
    expect(await alarmOf(ghost)).toBeNull();
    expect(await alarmOf(deleted)).toBeNull();
  });
});
