import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, expect, it } from "vitest";
import { redeploy } from "../support/redeploy";
import { EDGEWORK_VERSION } from "../../src/version";
import { effectCount, effectUrl, script, settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token" };
const get = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
const metaRows = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec("SELECT key, value FROM meta WHERE key <> 'schema_version' ORDER BY key")
      .toArray()
      .map((r) => `${r.key}=${r.value}`),
  );

/** A run of pause-writer paused on its POST, under the version deployed now. */
async function pausedRun(id: string) {
  await script("pause-writer", [{ tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "posted" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.status).toBe("awaiting_approval");
  return paused;
}

afterEach(() => redeploy());

it("a run records the edgework version it started under; while it stays, nothing more is written", async () => {
  const id = "version-same";
  const paused = await pausedRun(id);
  expect(paused).toMatchObject({ edgework_version: EDGEWORK_VERSION, resumed_under: null });
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", edgework_version: EDGEWORK_VERSION, resumed_under: null });
  expect(await metaRows(id)).toEqual([]);
});

it("a run paused under one version resumes under the next: GET /runs/:id and the run page show both, the POST made once", async () => {
  const id = "version-bump";
  redeploy({ edgeworkVersion: "0.1.0" });
  const paused = await pausedRun(id);
  expect(paused).toMatchObject({ edgework_version: "0.1.0", resumed_under: null });

  redeploy({ edgeworkVersion: "0.2.0" });
  // Read under the new version, before it runs again: nothing ran under it yet.
  expect(await (await get(`/runs/${id}`)).json()).toMatchObject({ edgework_version: "0.1.0", resumed_under: null });
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted", edgework_version: "0.1.0", resumed_under: "0.2.0" });
  expect(await effectCount(id)).toBe(1);

  expect(await (await get(`/runs/${id}`)).json()).toMatchObject({ edgework_version: "0.1.0", resumed_under: "0.2.0" });
  const page = await (await get(`/runs/${id}/view`)).text();
  expect(page).toContain("<code>0.1.0</code>, resumed under <code>0.2.0</code>");
  // A run started now is on the new version.
  expect((await pausedRun("version-bump-next")).edgework_version).toBe("0.2.0");
});

it("a rollback to the version it started under is shown too: resumed_under names the latest activation's version", async () => {
  const id = "version-rollback";
  redeploy({ edgeworkVersion: "0.1.0" });
  await script("pause-writer", [
    { tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(`${id}-1`), method: "POST" } }] },
    { tool_calls: [{ id: "p2", name: "fx_fetch", arguments: { url: effectUrl(`${id}-2`), method: "POST" } }] },
    { text: "both posted" },
  ]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const first = await settle(id);
  redeploy({ edgeworkVersion: "0.2.0" });
  await stub(id).decide(first.approvals[0]!.id, { decision: "approve", by: "test" });
  const second = await settle(id);
  expect(second).toMatchObject({ status: "awaiting_approval", resumed_under: "0.2.0" });
  redeploy({ edgeworkVersion: "0.1.0" });
  await stub(id).decide(second.approvals[1]!.id, { decision: "approve", by: "test" });
  expect(await settle(id)).toMatchObject({ status: "succeeded", edgework_version: "0.1.0", resumed_under: "0.1.0" });
  expect([await effectCount(`${id}-1`), await effectCount(`${id}-2`)]).toEqual([1, 1]);
});
