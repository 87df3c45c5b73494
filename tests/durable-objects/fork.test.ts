import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundledFiles } from "../../src/build/yaml";
import { catalogVersion } from "../../src/catalog";
import { files as workerFiles } from "../../src/edgework.generated";
import type { ForkCopy, JournalStepView } from "../../src/runs/fork";
import { initiatorOf } from "../../src/runs/initiator";
import type { RunView } from "../../src/runs/types";
import { redeploy } from "../support/redeploy";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";

const WRITER = "tests/fixtures/workers/fork-writer.worker";
const ORIGINAL = "Original fork instructions.";
const CHANGED = "Changed fork instructions.";
/** The next deploy: fork-writer's instructions changed. */
const changed = bundledFiles({ ...workerFiles, [WRITER]: workerFiles[WRITER]!.replace(ORIGINAL, CHANGED) });

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth, ...init }));
const forkOf = (id: string, body: unknown) => call(`/runs/${id}/fork`, { method: "POST", body: JSON.stringify(body) });

type Request = { messages: Array<{ role: string; content: string }> };
const system = (r: Request) => r.messages.find((m) => m.role === "system")?.content;

/** Every effect of this file's runs (their POSTs) is counted here. */
const EFFECTS = "fork-effects";
const postTurn = { tool_calls: [{ id: "p", name: "fx_fetch", arguments: { url: effectUrl(EFFECTS), method: "POST", body: "secret-body-7f3a" } }] };

/** The 10 steps of the source run, in order: 3 turns of model → approval → POST, then the answer. */
const STEPS = [1, 2, 3].flatMap((t) => [`turn:${t}/model`, `turn:${t}/tool:1/approval`, `turn:${t}/tool:1/result`]).concat("turn:4/model");
const KEYS = STEPS.map((s) => `fork-writer/${s}`);

/** The model's replies from step index `k` (0-based) on: one per model step at or after it. */
const repliesFrom = (k: number, answer: string) =>
  KEYS.slice(k)
    .filter((key) => key.endsWith("/model"))
    .map((key) => (key.endsWith("turn:4/model") ? { text: answer } : postTurn));

async function sourceRun(id: string): Promise<RunView> {
  await script("fork-writer", repliesFrom(0, "done on the original"));
  await stub(id).start({ id, worker: "fork-writer", input: { input: "go" }, approvalMode: "approve_all", budget: {} });
  return settle(id);
}

async function fork(id: string, body: Record<string, unknown>): Promise<{ id: string; forked_from: unknown; copied: ForkCopy }> {
  const res = await forkOf(id, body);
  expect(res.status, await res.clone().text()).toBe(202);
  return res.json();
}

const journalOf = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
    state.storage.sql.exec<{ key: string; value: string; at: number }>("SELECT key, value, at FROM journal ORDER BY seq").toArray(),
  );
const everythingOf = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => ({
    journal: state.storage.sql.exec("SELECT * FROM journal ORDER BY seq").toArray(),
    events: state.storage.sql.exec("SELECT * FROM events ORDER BY seq").toArray(),
    run: state.storage.sql.exec("SELECT * FROM run").toArray(),
    approvals: state.storage.sql.exec("SELECT * FROM approvals").toArray(),
  }));

afterEach(() => redeploy());

describe("forking a run", () => {
  let original: string;
  beforeAll(async () => {
    original = await catalogVersion();
  });

  it("at every step k of a 10-step run: nothing before k runs again, everything from k runs on the current definitions, the ended source is untouched", async () => {
    const source = "fork-src";
    expect(await sourceRun(source)).toMatchObject({ status: "succeeded", output: "done on the original", catalog_version: original });
    expect((await journalOf(source)).map((r) => r.key)).toEqual(KEYS);
    const before = await everythingOf(source);
    const written = (await stub(source).storageStats()).rowsWritten;

    redeploy({ files: changed });
    for (let k = 0; k < KEYS.length; k++) {
      await script("fork-writer", repliesFrom(k, `fork at ${k + 1}`));
      const effects = await effectCount(EFFECTS);
      const forked = await fork(source, { at: KEYS[k] });
      expect(forked.forked_from).toEqual({ run: source, at: KEYS[k] });
      // Copied: the steps before k, less the approval of a POST the fork makes again.
      const kept = KEYS.slice(0, k).filter((key) => !(key.endsWith("/approval") && !KEYS.slice(0, k).includes(key.replace(/approval$/, "result"))));
      expect(forked.copied).toMatchObject({ rows: kept.length, batches: 1 });
      expect((await journalOf(forked.id)).map((r) => r.key)).toEqual(kept);

      const done = await settle(forked.id);
      expect(done).toMatchObject({ status: "succeeded", output: `fork at ${k + 1}`, forked_from: { run: source, at: KEYS[k] } });
      expect(done.catalog_version).not.toBe(original);
      // Counted at the fake model and at the effect server: only the steps from k.
      const requests = (await modelRequests("fork-writer")) as Request[];
      expect(requests).toHaveLength(KEYS.slice(k).filter((key) => key.endsWith("/model")).length);
      for (const r of requests) expect(system(r)).toBe(CHANGED);
      expect((await effectCount(EFFECTS)) - effects).toBe(KEYS.slice(k).filter((key) => key.endsWith("/result")).length);
      expect((await journalOf(forked.id)).map((r) => r.key)).toEqual(KEYS);
      // The copied steps are the source's rows as they were (value and time).
      const [src, copy] = [await journalOf(source), await journalOf(forked.id)];
      for (const key of kept) expect(copy.find((r) => r.key === key)).toEqual(src.find((r) => r.key === key));
    }
    expect(await everythingOf(source)).toEqual(before);
    expect((await stub(source).storageStats()).rowsWritten).toBe(written);
  });

  it("definitions: pinned runs on the source's snapshot; approval_mode ask pauses the effect after `at`; a fork of a fork works", async () => {
    const source = "fork-pin";
    await sourceRun(source);
    redeploy({ files: changed });

    await script("fork-writer", repliesFrom(3, "pinned"));
    const pinned = await fork(source, { at: KEYS[3], definitions: "pinned" });
    expect(await settle(pinned.id)).toMatchObject({ status: "succeeded", output: "pinned", catalog_version: original });
    for (const r of (await modelRequests("fork-writer")) as Request[]) expect(system(r)).toBe(ORIGINAL);

    // At the first POST's result: its approval is not copied, so the fork asks for it again (and emails the approver).
    await script("fork-writer", repliesFrom(2, "asked"));
    const effects = await effectCount(EFFECTS);
    const asking = await fork(source, { at: KEYS[2], approval_mode: "ask" });
    const paused = await settle(asking.id);
    expect(paused).toMatchObject({ status: "awaiting_approval", approval_mode: "ask", approvals: [{ status: "pending", tool: "fx_fetch" }] });
    expect((await journalOf(asking.id)).map((r) => r.key)).toEqual([KEYS[0], "fork-writer/turn:1/tool:1/notify"]);
    expect(await effectCount(EFFECTS)).toBe(effects);

    // A fork of that paused fork (a run not ended): from its recorded prefix, on its own origin.
    await script("fork-writer", [{ text: "second generation" }]);
    const second = await fork(asking.id, { at: "fork-writer/turn:1/tool:1/notify", approval_mode: "reject_all" });
    expect(second.copied.rows).toBe(1);
    const done = await settle(second.id);
    expect(done).toMatchObject({ status: "succeeded", output: "second generation", forked_from: { run: asking.id, at: "fork-writer/turn:1/tool:1/notify" } });
    expect(await effectCount(EFFECTS)).toBe(effects);
    expect((await stub(asking.id).status())!.status).toBe("awaiting_approval");

    // A deploy without the worker: "current" has nothing to run (409), "pinned" still has the source's snapshot.
    redeploy({ files: Object.fromEntries(Object.entries(workerFiles).filter(([path]) => path !== WRITER)) });
    const gone = await forkOf(source, { at: KEYS[3] });
    expect(gone.status).toBe(409);
    expect(((await gone.json()) as { error: string }).error).toBe('worker "fork-writer" is not in the current catalog; fork with definitions "pinned"');
    await script("fork-writer", repliesFrom(3, "pinned again"));
    const stillPinned = await fork(source, { at: KEYS[3], definitions: "pinned" });
    expect(await settle(stillPinned.id)).toMatchObject({ status: "succeeded", output: "pinned again", catalog_version: original });

    // Origins are shown on the run page and in the index.
    const page = await (await call(`/runs/${second.id}/view`)).text();
    expect(page).toContain(`href="/runs/${asking.id}/view"`);
    expect(page).toContain("fork-writer/turn:1/tool:1/notify");
    const listed = (await (await call("/runs?trigger=fork")).json()) as { runs: Array<{ id: string; trigger: unknown }> };
    expect(listed.runs.find((r) => r.id === second.id)?.trigger).toEqual({ kind: "fork", name: asking.id });
  });

  it("a fork keeps who started its source (a fork of a fork too): they may not approve the fork's calls either", async () => {
    const source = "fork-initiator";
    await script("fork-writer", repliesFrom(0, "done on the original"));
    const trigger = { kind: "email", name: "inbox", from: "Lead+x@Example.com", message_id: "<m@example.com>" };
    await stub(source).start({ id: source, worker: "fork-writer", input: { input: "go" }, approvalMode: "approve_all", budget: {}, trigger });
    await settle(source);
    await script("fork-writer", repliesFrom(3, "forked"));
    const first = await fork(source, { at: KEYS[3], definitions: "pinned" });
    await settle(first.id);
    await script("fork-writer", repliesFrom(3, "forked again"));
    const second = await fork(first.id, { at: KEYS[3], definitions: "pinned" });
    await settle(second.id);
    for (const id of [first.id, second.id]) {
      const [run] = (await everythingOf(id)).run as Array<{ trigger: string }>;
      expect(JSON.parse(run!.trigger), id).toMatchObject({ kind: "fork", initiator: "Lead+x@Example.com" });
      expect(initiatorOf(JSON.parse(run!.trigger))).toBe("lead+x@example.com");
    }
  });

  it("a fork after a question's answer keeps the answer: the question is not asked again (it is an effect before `at`)", async () => {
    const source = "fork-question";
    const url = effectUrl(source);
    await stub(source).start({ id: source, worker: "fn-questioner", input: { url }, approvalMode: "ask", budget: {} });
    const asking = await settle(source);
    expect(asking.status).toBe("waiting");
    expect((await stub(source).decide(asking.approvals[0]!.id, { decision: "approve", answer: "42", by: "test" })).ok).toBe(true);
    expect(await settle(source)).toMatchObject({ status: "succeeded", output: { got: { answered: true, answer: "42" } } });
    const keys = (await journalOf(source)).map((r) => r.key);
    const answered = keys.indexOf("fn-questioner/human:1/approval");
    expect(answered).toBeGreaterThan(-1);
    // At the post after the answer: the question (its email, its answer) lies wholly before `at`.
    const at = keys[answered + 1]!;
    const forked = await fork(source, { at, definitions: "current" });
    expect((await journalOf(forked.id)).map((r) => r.key)).toEqual(keys.slice(0, answered + 1));
    const done = await settle(forked.id);
    expect(done).toMatchObject({ status: "succeeded", output: { got: { answered: true, answer: "42" } }, approvals: [] });
    expect(await effectCount(source)).toBe(2);
  });

  it("a fork before a question's answer asks it again and sends it again: the question's email is not copied without its answer", async () => {
    const source = "fork-question-open";
    await stub(source).start({ id: source, worker: "fn-questioner", input: { url: effectUrl(source) }, approvalMode: "ask", budget: {} });
    const asking = await settle(source);
    expect((await stub(source).decide(asking.approvals[0]!.id, { decision: "approve", answer: "41", by: "test" })).ok).toBe(true);
    await settle(source);
    const keys = (await journalOf(source)).map((r) => r.key);
    expect(keys).toContain("fn-questioner/human:1/notify");
    // At the answer: the question was sent before `at`, but answered at it.
    const forked = await fork(source, { at: "fn-questioner/human:1/approval", definitions: "current" });
    expect((await journalOf(forked.id)).map((r) => r.key)).not.toContain("fn-questioner/human:1/notify");
    expect(await settle(forked.id)).toMatchObject({ status: "waiting", approvals: [{ kind: "question", status: "pending" }] });
    // The fork's own notification step: the question went out again.
    expect((await journalOf(forked.id)).map((r) => r.key)).toContain("fn-questioner/human:1/notify");
  });

  it("refuses an `at` that is not one of the source's keys, whatever it is made of, and creates nothing", async () => {
    const source = "fork-hostile";
    await sourceRun(source);
    // Another run with a fifth turn: its key is no key of the source.
    await script("fork-writer", [postTurn, postTurn, postTurn, postTurn, { text: "longer" }]);
    await stub("fork-other").start({ id: "fork-other", worker: "fork-writer", input: { input: "go" }, approvalMode: "approve_all", budget: {} });
    expect((await journalOf((await settle("fork-other")).id)).map((r) => r.key)).toContain("fork-writer/turn:5/model");
    const hostile = [
      "fork-writer/turn:5/model", // a key of the other run, not of this one
      "fork-writer/turn:9/model", // the grammar's, but no such step
      "fork-writer/turn:1/tool:1/../../turn:1/model",
      "fork-writer/./turn:1/model",
      "fork-writer//turn:1/model",
      "fork-writer/turn:1/model/",
      "../fork-other/fork-writer/turn:1/model",
      "other-worker/turn:1/model",
      "fork-writer",
      "fork-writer/turn:1/tool:1",
      "fork-writer/turn:1/model' OR 1=1 --",
      "fork-writer/turn:%/model",
      "fork-writer/turn:1/mode\u0000l",
      "fork-writer/turn:1/\uD800/result",
    ];
    for (const at of hostile) {
      const res = await forkOf(source, { at });
      expect(res.status, at).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^at: /);
    }
    for (const body of [{ at: "x".repeat(5000) }, { at: 1 }, {}, { at: KEYS[0], definitions: "latest" }, { at: KEYS[0], extra: true }]) {
      expect((await forkOf(source, body)).status).toBe(400);
    }
    expect((await forkOf("no-such-run", { at: KEYS[0] })).status).toBe(404);
    expect((await forkOf("bad id!", { at: KEYS[0] })).status).toBe(404);
    const listed = (await (await call("/runs?trigger=fork&limit=100")).json()) as { runs: Array<{ trigger: { name: string } }> };
    expect(listed.runs.filter((r) => r.trigger.name === source)).toEqual([]);
  });

  it("copies a big prefix in batches across RPC, and refuses one over the bounds with its size", async () => {
    const source = "fork-big";
    await stub(source).start({ id: source, worker: "fork-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    // A queued run whose journal holds 12 steps of 1 MB before its first model step (as ctx.step values would be).
    const mb = JSON.stringify("x".repeat(1_000_000));
    await runInDurableObject(env.RUNS.getByName(source), (_o, state) => {
      for (let i = 1; i <= 12; i++) state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", `fork-writer/step:blob-${i}`, mb, i);
      state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", "fork-writer/turn:1/model", "null", 13);
    });
    const big = await fork(source, { at: "fork-writer/turn:1/model" });
    const keyBytes = Array.from({ length: 12 }, (_, i) => `fork-writer/step:blob-${i + 1}`.length).reduce((a, b) => a + b);
    expect(big.copied).toEqual({ rows: 12, bytes: 12 * mb.length + keyBytes, batches: 3 }); // at most 4 MiB per batch: 4 + 4 + 4 rows
    expect((await journalOf(big.id)).map((r) => r.value === mb)).toEqual(Array(12).fill(true));

    // Over the bytes bound: 24 steps of 1.45 MB (34.8 MB); over the rows bound: 10 001 small steps.
    const huge = "fork-huge";
    await stub(huge).start({ id: huge, worker: "fork-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const step = JSON.stringify("y".repeat(1_450_000));
    await runInDurableObject(env.RUNS.getByName(huge), (_o, state) => {
      for (let i = 1; i <= 24; i++) state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", `fork-writer/step:big-${i}`, step, i);
      for (let i = 1; i <= 10_001; i++) state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", `fork-writer/step:small-${i}`, "1", i);
      state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES (?, ?, ?)", "fork-writer/turn:1/model", "null", 1);
    });
    const overBytes = await forkOf(huge, { at: "fork-writer/step:small-1" });
    expect(overBytes.status).toBe(413);
    expect(((await overBytes.json()) as { error: string }).error).toContain("are 24 rows and");
    const overRows = await forkOf(huge, { at: "fork-writer/turn:1/model" });
    expect(overRows.status).toBe(413);
    expect(((await overRows.json()) as { error: string }).error).toContain("are 10025 rows");
  });

  it("GET /runs/:id/journal lists keys, kinds, times and sizes, paged, never a value", async () => {
    const source = "fork-list";
    await sourceRun(source);
    const seen: JournalStepView[] = [];
    let after = 0;
    for (const size of [4, 4, 2]) {
      const res = await call(`/runs/${source}/journal?limit=4&after=${after}`);
      const text = await res.text();
      expect(text).not.toContain("secret-body-7f3a");
      const page = JSON.parse(text) as { steps: JournalStepView[]; next: number | null };
      expect(page.steps).toHaveLength(size);
      seen.push(...page.steps);
      after = page.next ?? -1;
    }
    expect(after).toBe(-1);
    expect(seen.map((s) => s.key)).toEqual(KEYS);
    expect(seen.map((s) => s.kind)).toEqual(STEPS.map((s) => s.split("/").at(-1)!.replace(/:.*/, "")));
    const stored = await journalOf(source);
    expect(seen.map((s) => s.bytes)).toEqual(stored.map((r) => new TextEncoder().encode(r.value).length));
    expect(seen.every((s, i) => s.at === stored[i]!.at && Object.keys(s).sort().join() === "at,bytes,key,kind,seq")).toBe(true);
    for (const q of ["limit=0", "limit=501", "after=-1", "limit=abc"]) expect((await call(`/runs/${source}/journal?${q}`)).status).toBe(400);
    expect((await call("/runs/no-such-run/journal")).status).toBe(404);
    expect((await call(`/runs/${source}/journal`, { headers: {} })).status).toBe(401);
  });
});
