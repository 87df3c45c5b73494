import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it, vi } from "vitest";
import { testRunIndex } from "../../tests/support/test-objects";
import { effectUrl, script, settle, stub } from "../../tests/durable-objects/helpers";
import { report } from "./report";

const DAY = 86_400_000;
const object = (id: string) => env.RUNS.getByName(id);
const storageOf = (id: string) =>
  runInDurableObject(object(id), (_o, state) => {
    const tables = state.storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .toArray();
    const rows = tables.reduce((n, t) => n + (state.storage.sql.exec(`SELECT count(*) AS n FROM "${t.name}"`).one().n as number), 0);
    return { bytes: state.storage.sql.databaseSize, rows };
  });

/** Storage of a finished 10-turn run with one approval before and after its retention alarm, and what the run index costs per run. */
it("retention and run index cost", async () => {
  const id = "bench-retention";
  const get = (i: number) => ({ id: `g${i}`, name: "fx_fetch", arguments: { url: effectUrl(`ret-${i}`) } });
  await script("index-b", [
    ...Array.from({ length: 10 }, (_, i) => ({ tool_calls: [get(i)] })),
    { tool_calls: [{ id: "gate", name: "fx_fetch", arguments: { url: effectUrl("ret-gate"), method: "POST" } }] },
    { text: "done" },
  ]);
  const index0 = await testRunIndex(env).storageStats();
  await stub(id).start({ id, worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
  let view = await settle(id);
  await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "bench" });
  view = await settle(id);
  expect(view.status).toBe("succeeded");
  await vi.waitFor(async () => expect((await testRunIndex(env).listRuns({ worker: "index-b", limit: 10 })).runs[0]).toMatchObject({ id, status: "succeeded" }));
  const index1 = await testRunIndex(env).storageStats();
  const before = await storageOf(id);
  await runInDurableObject(object(id), (_o, state) => {
    // Its finish: the ending event (the row keeps when it started).
    state.storage.sql.exec("UPDATE run SET updated_at = updated_at - ?", 30 * DAY);
    state.storage.sql.exec("UPDATE events SET at = at - ?", 30 * DAY);
  });
  await runDurableObjectAlarm(object(id));
  const after = await storageOf(id);
  expect(after.rows).toBe(0);
  report("retention", {
    before,
    after,
    index: {
      reportsPerRun: index1.reports - index0.reports,
      rowsWrittenPerRun: index1.rowsWritten - index0.rowsWritten,
      bytesAfterOneRun: index1.databaseSize,
    },
  });
});
