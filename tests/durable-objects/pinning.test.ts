import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { parseYaml, bundledFiles } from "../../src/build/yaml";
import { createApp, type ToolsetKind } from "edgework";
import { catalogVersion, loadApp } from "../../src/catalog";
import { files as workerFiles, wranglerVars } from "../../src/edgework.generated";
import { counter } from "../../src/toolsets/counter";
import { functions } from "../fixtures/functions/index";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";
import { toJournalBeforeV8, toKeyGrammar1 } from "./key-grammar";

const WRITER = "tests/fixtures/workers/pin-writer.worker";
const HELPER = "tests/fixtures/workers/pin-helper.worker";
const ORIGINAL = "Original instructions: post once, then answer.";

/** The next deploy (bundled as the build does): pin-writer takes a topic, only takes notes, with new instructions; pin-helper's instructions changed. */
const changed = bundledFiles({
  ...workerFiles,
  [WRITER]: `---
name: pin-writer
description: Pinning fixture, changed.
model: openai:pin-writer
input:
  type: object
  properties: { topic: { type: string } }
  required: [topic]
toolsets:
  notes: { use: files, root: /notes }
---
New instructions: only take notes.
`,
  [HELPER]: "---\nname: pin-helper\nmodel: openai:pin-helper\n---\nNew helper instructions.\n",
});

type Request = { messages: Array<{ role: string; content: string }>; tools?: Array<{ function: { name: string } }> };
const requests = async (model: string) => (await modelRequests(model)) as Request[];
const system = (r: Request) => r.messages.find((m) => m.role === "system")?.content;
const toolNames = (r: Request) => (r.tools ?? []).map((t) => t.function.name).sort();
const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const postRun = (body: unknown) =>
  exports.default.fetch(new Request("https://edgework.test/runs", { method: "POST", headers: auth, body: JSON.stringify(body) }));

/** A run of pin-writer paused on its POST; the script then counts and calls the helper before answering. */
async function pausedRun(id: string) {
  await script("pin-writer", [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] },
    {
      tool_calls: [
        { id: "count", name: "tally_increment", arguments: {} },
        { id: "help", name: "pin-helper", arguments: { input: "hi" } },
      ],
    },
    { text: "done on the original" },
  ]);
  await script("pin-helper", [{ text: "helped" }]);
  await stub(id).start({ id, worker: "pin-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const view = await settle(id);
  expect(view.status).toBe("awaiting_approval");
  return view;
}

async function expectFinishedOnOriginal(id: string, version: string) {
  const done = await settle(id);
  expect(done).toMatchObject({ status: "succeeded", output: "done on the original", catalog_version: version });
  expect(await effectCount(id)).toBe(1);
  const writer = await requests("pin-writer");
  expect(writer).toHaveLength(3);
  for (const r of writer) {
    expect(system(r)).toBe(ORIGINAL);
    expect(toolNames(r)).toEqual(["fx_fetch", "pin-helper", "tally_increment"]);
  }
  expect((await requests("pin-helper")).map(system)).toEqual(["Original helper instructions."]);
}

/** A new deploy of the app, as a new version of its Worker would call createApp. */
const deploy = (files: Record<string, string>, toolsets: Record<string, ToolsetKind> = { counter }) => createApp({ files, functions, wranglerVars, toolsets });

afterEach(() => deploy(workerFiles));

describe("runs are pinned across deploys", () => {
  it("a paused run finishes on the definitions it started with; a new run uses the new ones", async () => {
    const id = "pin-swap";
    const version = await catalogVersion();
    const paused = await pausedRun(id);
    expect(paused.catalog_version).toBe(version);

    deploy(changed);
    const next = await catalogVersion();
    expect(next).not.toBe(version);
    expect(await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" })).toEqual({
      ok: true,
      approved: true,
      status: "approved",
      edited: false,
    });
    await expectFinishedOnOriginal(id, version);

    // New runs: the new input schema, instructions and tools.
    const refused = await postRun({ worker: "pin-writer", input: { input: "go" } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("topic");
    await script("pin-writer", [{ text: "noted" }]);
    const started = await postRun({ worker: "pin-writer", input: { topic: "pinning" } });
    expect(started.status).toBe(202);
    const { id: newId } = (await started.json()) as { id: string };
    expect(await settle(newId)).toMatchObject({ status: "succeeded", output: "noted", catalog_version: next });
    const [r] = await requests("pin-writer");
    expect(system(r!)).toBe("New instructions: only take notes.");
    expect(toolNames(r!).length).toBeGreaterThan(0);
    expect(toolNames(r!).every((n) => n.startsWith("notes_"))).toBe(true);

    const shown = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}`, { headers: auth }));
    expect(await shown.json()).toMatchObject({ catalog_version: version });
    const page = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}/view`, { headers: auth }));
    expect(await page.text()).toContain(`<code>${version}</code>`);
  });

  it("a toolset kind removed in between fails the run with an error naming it and the catalog change", async () => {
    const id = "pin-kind-gone";
    const version = await catalogVersion();
    const paused = await pausedRun(id);
    // The next deploy has no counter kind (and no worker using it).
    const withoutCounter = Object.fromEntries(
      Object.entries(workerFiles).filter(([, text]) => !text.includes('"use":"counter"') && !text.includes('"worker":"load"')),
    );
    deploy(withoutCounter, {});
    expect(() => loadApp()).not.toThrow(); // a deploy that loads on its own

    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
    const failed = await settle(id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "config" }, approvals: [{ status: "approved" }] });
    expect(failed.error!.message).toContain(`${WRITER}: toolsets.tally.use: unknown toolset kind "counter"`);
    expect(failed.error!.message).toContain(`(the run started on catalog ${version}; it changed since)`);
    // Failed at once: no alarm left to retry (the one alarm is retention's, as for any ended run), the POST never made, no more model requests.
    expect(await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm())).toBe(failed.updated_at + 30 * 86_400_000);
    expect(await effectCount(id)).toBe(0);
    expect(await requests("pin-writer")).toHaveLength(1);
  });

  it("replay after eviction rebuilds the run's definitions from its SQLite snapshot", async () => {
    const id = "pin-evict";
    const version = await catalogVersion();
    const paused = await pausedRun(id);
    // A new registry object: nothing parsed for this deploy is cached yet.
    deploy(changed);
    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
    const size = await runInDurableObject(
      env.RUNS.getByName(id),
      (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM journal").one().n,
    );
    await stub(id).setTestHooks({ fault: { atJournalSize: size + 2, mode: "abort" } });
    const count = { activations: 0, failed: 0 };
    await settle(id, { count });
    expect(count.failed).toBe(1);
    await expectFinishedOnOriginal(id, version);

    // The object itself sees the new deploy: a run started now is on the new catalog.
    await stub("pin-evict-next").start({ id: "pin-evict-next", worker: "pin-writer", input: { topic: "x" }, approvalMode: "ask", budget: {} });
    expect((await stub("pin-evict-next").status())!.catalog_version).toBe(await catalogVersion());
  });

  it("a run paused under schema version 2 (its catalog in a row of its own) is upgraded in place and finishes on it", async () => {
    const id = "pin-v2";
    const version = await catalogVersion();
    const paused = await pausedRun(id);
    // Back to how version 2 stored it: no catalog columns in the run row, the snapshot in run_catalog.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE run_catalog (version TEXT NOT NULL, files TEXT NOT NULL)");
      sql.exec("INSERT INTO run_catalog (version, files) SELECT catalog_version, catalog_files FROM run");
      sql.exec(`CREATE TABLE run_v2 (
        id TEXT PRIMARY KEY, worker TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
        approval_mode TEXT NOT NULL, budget TEXT NOT NULL, trigger TEXT,
        output TEXT, error TEXT, usage TEXT, retries INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`);
      sql.exec(
        "INSERT INTO run_v2 SELECT id, worker, input, status, approval_mode, budget, trigger, output, error, usage, retries, created_at, updated_at FROM run",
      );
      sql.exec("ALTER TABLE approvals DROP COLUMN asked_step");
      sql.exec("ALTER TABLE approvals DROP COLUMN deciders");
      sql.exec("ALTER TABLE approvals DROP COLUMN kind");
      sql.exec("ALTER TABLE approvals DROP COLUMN input_schema");
      sql.exec("DROP TABLE run");
      sql.exec("ALTER TABLE run_v2 RENAME TO run");
      sql.exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
      toKeyGrammar1(sql);
      toJournalBeforeV8(sql);
    }).catch((err) => expect.unreachable(String(err)));
    // A new instance (as after a deploy) migrates the object, then the run resumes on its pinned catalog.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("deployed")).catch((err: { durableObjectReset?: boolean }) =>
      expect(err.durableObjectReset).toBe(true),
    );
    deploy(changed);
    expect((await stub(id).status())!.catalog_version).toBe(version);
    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
    await expectFinishedOnOriginal(id, version);
  });
});

describe("the pinned set is bounded", () => {
  it("a worker whose reachable definitions exceed one snapshot row is a catalog problem naming it", () => {
    const big = `---\nname: big\n---\n${"x".repeat(1024 * 1024)}\n`;
    expect(() => loadApp({ "workers/big.worker": big, "workers/small.worker": "---\nname: small\n---\nHi.\n" }, parseYaml)).toThrow(
      /workers\/big\.worker: toolsets\.workers: this worker, the workers it reaches and models\.yaml are \d+ bytes as JSON; a run pins them in one row of at most 1048576 bytes/,
    );
  });
});
