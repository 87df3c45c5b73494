import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { testRunIndex } from "../support/test-objects";
import type { RunQuery, RunSummary } from "../../src/runs/index-types";
import type { RunStatusName } from "../../src/runs/types";
import type { RunIndexRpc } from "../../src/runs/rpc";

const auth = { Authorization: "Bearer test-token" };
const STATUSES: RunStatusName[] = ["running", "waiting", "succeeded", "failed"];
const BASE = Date.UTC(2026, 2, 1);

/** Run i of 1,000: 3 attributes (repo of 10, team of 4, env of 2), a status of 4; timestamps collide in threes. */
const summary = (i: number): RunSummary => ({
  id: `ia-${String(i).padStart(4, "0")}`,
  worker: "idx-attr",
  status: STATUSES[i % 4]!,
  trigger: { kind: "api" },
  attributes: { repo: `acme/r${i % 10}`, team: `t${i % 4 === 3 ? 9 : i % 3}`, env: i % 2 ? "prod" : "dev" },
  created_at: BASE + Math.floor(i / 3) * 1000,
  updated_at: BASE,
  usage: null,
  version: 1,
  pending: [],
});
const all = Array.from({ length: 1000 }, (_, i) => summary(i));
const newestFirst = (xs: RunSummary[]) => [...xs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((s) => s.id);
const matches = (s: RunSummary, q: Omit<RunQuery, "limit">) =>
  (!q.status || s.status === q.status) && Object.entries(q.attributes ?? {}).every(([n, v]) => s.attributes[n] === v);

/** Every page of a query (RPC), and the rows the index read for them. */
async function walk(q: Omit<RunQuery, "limit">, limit: number) {
  const index = testRunIndex(env);
  const before = (await index.storageStats()).rowsRead;
  const ids: string[] = [];
  let after: RunQuery["after"];
  do {
    const page = await index.listRuns({ ...q, limit, after });
    ids.push(...page.runs.map((r) => r.id));
    after = page.next ?? undefined;
  } while (after);
  return { ids, rowsRead: (await index.storageStats()).rowsRead - before };
}

it("1,000 runs with 3 attributes each: attr filters walk only the runs that have the first attribute, paged to the end, none missed or repeated", async () => {
  for (const s of all) await testRunIndex(env).upsert(s);
  const cases: Array<Omit<RunQuery, "limit">> = [
    { attributes: { repo: "acme/r3" } },
    { attributes: { repo: "acme/r3" }, status: "failed" },
    { attributes: { repo: "acme/r3", env: "prod" } },
    { attributes: { repo: "acme/r7", team: "t1", env: "prod" }, status: "failed" },
  ];
  const rows: Record<string, number> = {};
  for (const q of cases) {
    const expected = newestFirst(all.filter((s) => matches(s, q)));
    const { ids, rowsRead } = await walk(q, 50);
    expect(ids, JSON.stringify(q)).toEqual(expected);
    rows[JSON.stringify(q)] = rowsRead;
    // The 100 runs of repo r3 (one row of run_attributes and one of runs each), not the 1,000.
    expect(rowsRead, JSON.stringify(q)).toBeLessThan(350);
  }
  const scan = await walk({ status: "failed" }, 50);
  expect(scan.ids).toEqual(newestFirst(all.filter((s) => s.status === "failed")));
  expect(scan.rowsRead).toBeGreaterThan(1000);
  console.log(
    "index rows read per query (1,000 runs, 3 attributes, pages of 50):",
    JSON.stringify({ ...rows, '{"status":"failed"} (no attribute)': scan.rowsRead }),
  );

  // The API pages the same way: attr.<name> with status and the cursor.
  const api: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await exports.default.fetch(
      new Request(`https://edgework.test/runs?attr.repo=acme%2Fr3&status=failed&limit=7${cursor ? `&cursor=${cursor}` : ""}`, { headers: auth }),
    );
    const body = (await res.json()) as { runs: Array<{ id: string; attributes: Record<string, string> }>; next_cursor: string | null };
    api.push(...body.runs.map((r) => r.id));
    for (const r of body.runs) expect(r.attributes.repo).toBe("acme/r3");
    cursor = body.next_cursor;
  } while (cursor);
  expect(api).toEqual(newestFirst(all.filter((s) => matches(s, { attributes: { repo: "acme/r3" }, status: "failed" }))));
});

it("a run's attributes follow its reports: a newer one moves it between filters, an older one changes nothing, retention drops it", async () => {
  const s = { ...summary(5000), id: "ia-moving", attributes: { stage: "new" } };
  const index = testRunIndex(env);
  await index.upsert(s);
  const ids = async (stage: string) => (await index.listRuns({ attributes: { stage }, limit: 10 })).runs.map((r) => r.id);
  expect(await ids("new")).toEqual(["ia-moving"]);
  await index.upsert({ ...s, version: 2, attributes: { stage: "done", owner: "ann" } });
  expect(await ids("new")).toEqual([]);
  expect(await ids("done")).toEqual(["ia-moving"]);
  await index.upsert({ ...s, version: 1, attributes: { stage: "new" } });
  expect(await ids("done")).toEqual(["ia-moving"]);
  await index.retire({ id: "ia-moving", worker: "idx-attr", retention_days: 30, finished_at: BASE, deleted_at: Date.now() });
  expect(await ids("done")).toEqual([]);
  expect((await index.listRuns({ attributes: { owner: "ann" }, limit: 10 })).runs).toEqual([]);
});

it("an index made before attributes (no meta, no attributes column) is upgraded in place and keeps its runs", async () => {
  const old = env.RUN_INDEX.getByName("index-before-attributes");
  await runInDurableObject(old, (_o, state) => {
    state.storage.sql.exec("DROP TABLE run_attributes");
    state.storage.sql.exec("DROP TABLE meta");
    state.storage.sql.exec("ALTER TABLE runs DROP COLUMN attributes");
    state.storage.sql.exec(
      "INSERT INTO runs (id, worker, status, trigger_kind, trigger_name, created_at, updated_at, usage, version) VALUES ('ia-old', 'w', 'succeeded', 'api', NULL, 1, 1, 'null', 1)",
    );
  });
  await runInDurableObject(old, (_o, state) => state.abort("deployed")).catch(() => {});
  const index = env.RUN_INDEX.getByName("index-before-attributes") as unknown as RunIndexRpc;
  expect((await index.listRuns({ limit: 10 })).runs).toEqual([expect.objectContaining({ id: "ia-old", attributes: {} })]);
  await index.upsert({ ...summary(1), id: "ia-old", created_at: 1, version: 2 });
  expect((await index.listRuns({ attributes: { repo: "acme/r1" }, limit: 10 })).runs.map((r) => r.id)).toEqual(["ia-old"]);
});
