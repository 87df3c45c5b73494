import { expect, it } from "vitest";
import { effectCount, effectUrl, stub } from "../../tests/durable-objects/helpers";
import { random } from "../../tests/support/seeded-random";
import { settleTree } from "../../tests/durable-objects/child-runs";
import { report } from "./report";

/**
 * Issue 32's fan-out: one parent maps fn-child-item over 200 inputs, 20 child runs at once,
 * with random evictions of the parent and of children (tests/durable-objects/children.test.ts
 * runs the same with 24), then the storage each child costs on either side (no evictions: an
 * evicted object's counters restart).
 */
const start = (id: string, count: number, concurrency: number) =>
  stub(id).start({ id, worker: "fn-child-map", input: { url: effectUrl(id), count, concurrency }, approvalMode: "ask", budget: {} });

it("200 children, 20 at once, through random evictions: every child's effect and result once", async () => {
  const id = "bench-children-200";
  const N = 200;
  await start(id, N, 20);
  await stub(id).abortAfterIo("child.start", 7);
  const rng = random(200);
  const t0 = performance.now();
  const { parent, kills, rounds } = await settleTree(id, { kill: () => rng() < 0.05, maxRounds: 2_000 });
  const ms = Math.round(performance.now() - t0);
  expect(parent).toMatchObject({ status: "succeeded", output: { count: N, sum: N * (N - 1) } });
  expect(new Set(parent.children.map((c) => c.id)).size).toBe(N);
  const counts = await Promise.all(Array.from({ length: N }, (_, n) => effectCount(`${id}-${n}`)));
  expect(counts.every((c) => c === 1)).toBe(true);
  report("children_fan_out", { children: N, concurrency: 20, kills, rounds, ms });
}, 600_000);

it("rows written and read per child, parent side and child side", async () => {
  const id = "bench-children-rows";
  const N = 40;
  await start(id, N, 10);
  const { parent } = await settleTree(id);
  expect(parent.status).toBe("succeeded");
  const p = await stub(id).storageStats();
  const kids = await Promise.all(parent.children.map((c) => stub(c.id).storageStats()));
  const sum = (k: "rowsRead" | "rowsWritten" | "alarmsSet") => kids.reduce((a, s) => a + s[k], 0) / N;
  report("children_rows", {
    children: N,
    parent_per_child: { rowsWritten: +(p.rowsWritten / N).toFixed(1), rowsRead: +(p.rowsRead / N).toFixed(1), alarmsSet: +(p.alarmsSet / N).toFixed(2) },
    child_each: { rowsWritten: +sum("rowsWritten").toFixed(1), rowsRead: +sum("rowsRead").toFixed(1), alarmsSet: +sum("alarmsSet").toFixed(2) },
  });
}, 600_000);
