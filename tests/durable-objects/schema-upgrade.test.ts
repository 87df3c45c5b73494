import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { APPROVALS_CURRENT, RUN_CURRENT } from "../../durable-objects/schema";
import { EDGEWORK_VERSION } from "../../src/version";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";
import { toJournalBeforeV8, toKeyGrammar1 } from "./key-grammar";

/** An object's tables, views and columns (without workerd's own _cf_ tables), to compare a new object with an upgraded one. */
const shape = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec(
        "SELECT m.type, m.name, p.name AS col FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p WHERE m.type IN ('table', 'view') AND substr(m.name, 1, 4) <> '_cf_' ORDER BY 1, 2, p.cid",
      )
      .toArray()
      .map((r) => `${r.type} ${r.name}.${r.col}`),
  );

/** APPROVALS_CURRENT as versions 4 to 6 read it: without the deciders column of version 7 (nor the input_schema of version 12). */
const APPROVALS_CURRENT_V6 = APPROVALS_CURRENT.text
  .slice(1, -1)
  .replace(" a.deciders, a.kind,", "")
  .replace(", a.input_schema", "")
  .replace("\n  d.value -> '$.decider' AS decider,\n  d.value ->> '$.answer' AS answer,", "");

/** RUN_CURRENT as versions 4 to 10 read it: without the attributes column of version 11. */
const RUN_CURRENT_V10 = RUN_CURRENT.text.slice(1, -1).replace(" trigger, attributes,", " trigger,").replace(" r.trigger, r.attributes,", " r.trigger,");

/** A new instance (as after a deploy) migrates the object. */
const redeploy = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("deployed")).catch((err: { durableObjectReset?: boolean }) =>
    expect(err.durableObjectReset).toBe(true),
  );

/** Marks the object as of schema `version`, without the columns later versions added (version 7: run.edgework_version; 11: run.attributes; 12: approvals.input_schema). */
function toSchemaVersion(sql: SqlStorage, version: number) {
  if (version < 12) sql.exec("ALTER TABLE approvals DROP COLUMN input_schema");
  if (version < 11) sql.exec("ALTER TABLE run DROP COLUMN attributes");
  if (version < 7) sql.exec("ALTER TABLE run DROP COLUMN edgework_version");
  if (version < 8) toJournalBeforeV8(sql);
  if (version < 9) {
    sql.exec("ALTER TABLE approvals DROP COLUMN deciders");
    sql.exec("ALTER TABLE approvals DROP COLUMN kind");
  }
  sql.exec("UPDATE meta SET value = ? WHERE key = 'schema_version'", String(version));
}

/** How schema version 3 defined the run's status: from its row, or its newest lifecycle event while it lived. */
const RUN_CURRENT_V3 = `
CREATE VIEW run_current AS
SELECT r.id, r.worker, r.input, r.approval_mode, r.budget, r.trigger, r.output, r.error, r.usage, r.retries, r.created_at,
  CASE WHEN r.status IN ('succeeded', 'failed', 'cancelled') OR e.type IS NULL THEN r.status
       WHEN e.type = 'approval_recorded' THEN 'running' ELSE substr(e.type, 5) END AS status,
  CASE WHEN r.status IN ('succeeded', 'failed', 'cancelled') THEN r.updated_at ELSE max(r.updated_at, coalesce(e.at, 0)) END AS updated_at
FROM run r LEFT JOIN (
  SELECT type, at FROM events WHERE type IN ('run_queued', 'run_running', 'run_awaiting_approval', 'approval_recorded') ORDER BY seq DESC LIMIT 1
) e ON 1`;

/**
 * Rewrites a paused run as version 3 stored it: its first approval decided then
 * (row status + an approval_recorded event), the pause's outcome in the run row,
 * events without outcome, approvals without asked_step, the old view, journal keys of grammar 1.
 */
function toVersion3(sql: SqlStorage, decided: string) {
  toKeyGrammar1(sql);
  const usage = sql.exec("SELECT data ->> '$.usage' AS u FROM events WHERE type = 'run_awaiting_approval'").one().u as string;
  sql.exec("ALTER TABLE approvals DROP COLUMN asked_step");
  sql.exec("UPDATE run SET status = 'awaiting_approval', usage = ?, updated_at = updated_at + 1", usage);
  sql.exec("UPDATE events SET data = '{}' WHERE type = 'run_awaiting_approval'");
  const key = sql.exec("SELECT key FROM approvals WHERE id = ?", decided).one().key as string;
  sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", key, JSON.stringify({ approved: true, by: "v3" }), Date.now());
  sql.exec("UPDATE approvals SET status = 'approved', decided_by = 'v3', decided_at = ? WHERE id = ?", Date.now(), decided);
  sql.exec(
    "INSERT INTO events (after_step, type, data, at) VALUES ((SELECT max(seq) FROM journal), 'approval_recorded', ?, ?)",
    JSON.stringify({ approval_id: decided, status: "approved", by: "v3" }),
    Date.now(),
  );
  // Version 3 re-paused on the other approval: row and event.
  sql.exec("INSERT INTO events (after_step, type, data, at) VALUES ((SELECT max(seq) FROM journal), 'run_awaiting_approval', '{}', ?)", Date.now());
  sql.exec(RUN_CURRENT_V3);
  toSchemaVersion(sql, 3);
}

it("a run paused under schema version 3 (outcome in its row, decisions in the approvals rows) is upgraded in place and finishes; its decisions show once", async () => {
  const id = "upgrade-v3";
  const post = (n: number) => ({ id: `p${n}`, name: "fx_fetch", arguments: { url: effectUrl(`${id}-${n}`), method: "POST" } });
  await script("pause-writer", [{ tool_calls: [post(1), post(2)] }, { text: "both posted" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.approvals.map((a) => a.status)).toEqual(["pending", "pending"]);
  const [first, second] = paused.approvals.map((a) => a.id) as [string, string];

  const built = await shape(id);
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => toVersion3(state.storage.sql, first)).catch((err) => expect.unreachable(String(err)));
  await redeploy(id);

  const upgraded = (await stub(id).status())!;
  expect(upgraded).toMatchObject({ status: "awaiting_approval", usage: paused.usage });
  expect(upgraded.approvals).toMatchObject([
    { id: first, status: "approved", decided_by: "v3" },
    { id: second, status: "pending" },
  ]);
  // The upgrades end where a new object starts: the same tables and columns, version 3's view gone.
  expect(await shape(id)).toEqual(built);

  expect(await stub(id).decide(second, { decision: "approve", note: "fine", by: "v4" })).toEqual({
    ok: true,
    approved: true,
    status: "approved",
    edited: false,
  });
  const done = await settle(id);
  expect(done).toMatchObject({ status: "succeeded", output: "both posted" });
  expect(done.approvals.find((a) => a.id === second)).toMatchObject({ status: "approved", decided_by: "v4", note: "fine" });
  expect(done.approvals.find((a) => a.id === first)).toMatchObject({ status: "approved", decided_by: "v3" });
  expect(await effectCount(`${id}-1`)).toBe(1);
  expect(await effectCount(`${id}-2`)).toBe(1);

  // Watchers see one approval_recorded per decision: version 3's from its event, version 4's from the journal step.
  const { events } = (await stub(id).eventsSince())!;
  const recorded = events.filter((e) => e.type === "approval_recorded").map((e) => e.data);
  expect(recorded).toEqual([
    { approval_id: first, status: "approved", by: "v3" },
    { approval_id: second, status: "approved", by: "v4" },
  ]);
});

it("a run paused under schema version 4 (views run_current and approvals_current) loses the views on upgrade and reads the same", async () => {
  const id = "upgrade-v4";
  await script("pause-writer", [
    { tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(`${id}-1`), method: "POST" } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.status).toBe("awaiting_approval");
  const built = await shape(id);
  // Version 4 kept both as views: the same SQL the queries now inline; its journal keys were of grammar 1.
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
    toKeyGrammar1(state.storage.sql);
    state.storage.sql.exec(`CREATE VIEW run_current AS ${RUN_CURRENT_V10}`);
    state.storage.sql.exec(`CREATE VIEW approvals_current AS ${APPROVALS_CURRENT_V6}`);
    toSchemaVersion(state.storage.sql, 4);
  });
  await redeploy(id);
  expect(await shape(id)).toEqual(built);
  // The same view, its paths (call tree, approval) in grammar 1, no edgework version (version 4 recorded none); the timeline without the steps' starts, which version 4 did not keep.
  const { timeline, ...upgraded } = (await stub(id).status())!;
  const { timeline: _before, ...before } = paused;
  // Asked before version 12 kept the tool's input schema: approved or rejected as asked.
  const asAsked = before.approvals.map((a) => ({ ...a, editable: false, input_schema: null }));
  expect(upgraded).toEqual({ ...JSON.parse(JSON.stringify({ ...before, approvals: asAsked }).replaceAll("/tool:1", "/tool:p1")), edgework_version: null });
  expect(timeline.spans.filter((s) => s.kind === "model").every((s) => s.start === s.end)).toBe(true);
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "v5" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted" });
  expect(await effectCount(`${id}-1`)).toBe(1);
});

it("a new run object's schema costs 15 rows written: the latest tables at once (no upgrade statements, no views)", async () => {
  // The object's constructor builds its schema: nothing else has written yet.
  expect((await stub("fresh-schema").storageStats()).rowsWritten).toBeLessThanOrEqual(15);
  const built = await shape("fresh-schema");
  expect(built).toEqual(expect.arrayContaining(["table run.catalog_version", "table approvals.asked_step"]));
  expect(built.filter((s) => s.startsWith("view"))).toEqual([]);
});

const keyGrammarRow = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec("SELECT value FROM meta WHERE key = 'key_grammar'")
      .toArray()
      .map((r) => r.value),
  );

it("a run paused under schema version 5 (journal keys of grammar 1: tool calls by the model's ids) is marked grammar 1 on upgrade and resumes on its recorded steps, repeating nothing", async () => {
  const id = "upgrade-v5-keys";
  const post = (n: number) => ({ id: `p${n}`, name: "fx_fetch", arguments: { url: effectUrl(`${id}-${n}`), method: "POST" } });
  await script("pause-writer", [{ tool_calls: [post(1), post(2)] }, { text: "both posted" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const approvals = (await settle(id)).approvals;
  const approvalOf = (n: number) => approvals.find((a) => (a.args as { url: string }).url.endsWith(`-${n}`))!.id;
  const [first, second] = [approvalOf(1), approvalOf(2)];
  // The first call approved and made before the deploy; the run waits on the second.
  await stub(id).decide(first, { decision: "approve", by: "v5" });
  expect(await settle(id)).toMatchObject({ status: "awaiting_approval" });
  expect(await effectCount(`${id}-1`)).toBe(1);
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
    toKeyGrammar1(state.storage.sql);
    toSchemaVersion(state.storage.sql, 5);
  });
  await redeploy(id);
  expect(await keyGrammarRow(id)).toEqual(["1"]);
  expect((await stub(id).status())!.call_tree!.tools.map((t) => [t.id, t.path, t.status])).toEqual([
    ["p1", "pause-writer/turn:1/tool:p1", "ok"],
    ["p2", "pause-writer/turn:1/tool:p2", "pending"],
  ]);

  await stub(id).decide(second, { decision: "approve", by: "v6" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: "both posted" });
  expect(await effectCount(`${id}-1`)).toBe(1);
  expect(await effectCount(`${id}-2`)).toBe(1);
  expect(await modelRequests("pause-writer")).toHaveLength(2);
});

it("the key grammar mark is written only by the upgrade of an object whose journal has rows: never for a new object or an empty journal", async () => {
  const id = "keys-fresh";
  await script("pause-writer", [
    { tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(`${id}-1`), method: "POST" } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  expect(await settle(id)).toMatchObject({ status: "awaiting_approval" });
  await redeploy(id);
  expect(await keyGrammarRow(id)).toEqual([]);

  const empty = "keys-empty-v5";
  expect(await stub(empty).status()).toBeNull();
  await runInDurableObject(env.RUNS.getByName(empty), (_o, state) => toSchemaVersion(state.storage.sql, 5));
  await redeploy(empty);
  expect(await stub(empty).status()).toBeNull();
  expect(await keyGrammarRow(empty)).toEqual([]);
});

it("a direct-mode run never makes the model_dispatch table (schema.ts makes it on first use, for a hand-off)", async () => {
  const id = "direct-no-dispatch-table";
  await script("pause-writer", [{ text: "done" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "approve_all", budget: {} });
  expect(await settle(id)).toMatchObject({ status: "succeeded" });
  expect((await shape(id)).filter((s) => s.includes("model_dispatch"))).toEqual([]);
});

it("a run paused under schema version 6 (no edgework version recorded) is upgraded in place: its start version shows as unknown, the version that resumed it as resumed_under", async () => {
  const id = "upgrade-v6-version";
  await script("pause-writer", [
    { tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(`${id}-1`), method: "POST" } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  const built = await shape(id);
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
    toSchemaVersion(state.storage.sql, 6);
  });
  await redeploy(id);
  expect(await shape(id)).toEqual(built);
  // The same view but its timeline (version 6 kept no step starts) and edgework version (none recorded).
  const { timeline: _upgraded, ...upgraded } = (await stub(id).status())!;
  const { timeline: _before, ...before } = paused;
  // Asked before version 12 kept the tool's input schema: approved or rejected as asked.
  const asAsked = before.approvals.map((a) => ({ ...a, editable: false, input_schema: null }));
  expect(upgraded).toEqual({ ...before, approvals: asAsked, edgework_version: null });
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "v7" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted", edgework_version: null, resumed_under: EDGEWORK_VERSION });
  expect(await effectCount(`${id}-1`)).toBe(1);
});

it("a run of schema version 10 (no attributes column) is upgraded in place: no attributes, and its code may set some after", async () => {
  const id = "upgrade-v10-attributes";
  await stub(id).start({ id, worker: "fn-tagger", input: { attrs: [], sleep: true }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.attributes).toEqual({});
  const built = await shape(id);
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => toSchemaVersion(state.storage.sql, 10));
  await redeploy(id);
  expect(await shape(id)).toEqual(built);
  const { timeline: _upgraded, ...upgraded } = (await stub(id).status())!;
  const { timeline: _before, ...before } = paused;
  expect(upgraded).toEqual(before);
  await stub(id).advanceClock(2 * 60_000);
  expect(await settle(id)).toMatchObject({ status: "succeeded", attributes: {} });
});

it("a run paused under schema version 11 (no input schema kept) is upgraded in place: its approval takes no edit, and decides as asked", async () => {
  const id = "upgrade-v11-edit";
  await script("edit-writer", [
    { tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "asked" } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker: "edit-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.approvals[0]).toMatchObject({ editable: true });
  const built = await shape(id);
  await runInDurableObject(env.RUNS.getByName(id), (_o, state) => toSchemaVersion(state.storage.sql, 11));
  await redeploy(id);
  expect(await shape(id)).toEqual(built);
  expect((await stub(id).status())!.approvals[0]).toMatchObject({ editable: false, input_schema: null });
  const edit = { decision: "approve" as const, by: "v12", arguments: { url: effectUrl(id), method: "POST", body: "edited" } };
  expect(await stub(id).decide(paused.approvals[0]!.id, edit)).toEqual({
    ok: false,
    status: 400,
    error: "this approval was asked before calls could be edited: approve or reject it as asked",
  });
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "v12" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted" });
  expect(await effectCount(id)).toBe(1);
});
