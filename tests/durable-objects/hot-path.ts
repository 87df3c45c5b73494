import { exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { effectUrl, script, settle, stub } from "./helpers";

/**
 * One run of the hot path (issue 32 item 2): started, paused for one approval, approved and
 * finished; its object's requests to other objects are counted (TestRunDO `outboundRequests`).
 * `sharded`: it reports to its shard of the run index, as in production (else to the legacy index,
 * as runs queued before sharding do). Used by run-index-shards.test.ts and bench/do/scale.bench.test.ts.
 */
export async function approvedRun(id: string, sharded: boolean): Promise<Record<string, number>> {
  await script("index-b", [{ tool_calls: [{ id: "c1", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "done" }]);
  if (sharded) await stub(id).useShardedIndex();
  await stub(id).start({ id, worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.status).toBe("awaiting_approval");
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
  expect((await settle(id)).status).toBe("succeeded");
  // Its last report is in (sent after the run's transaction, never awaited by it).
  await vi.waitFor(async () => expect(await listedStatus(id)).toBe("succeeded"));
  return stub(id).outboundRequests();
}

async function listedStatus(id: string): Promise<string | undefined> {
  const res = await exports.default.fetch(
    new Request("https://edgework.test/runs?worker=index-b&limit=200", { headers: { Authorization: "Bearer test-token" } }),
  );
  const body = (await res.json()) as { runs: { id: string; status: string }[] };
  return body.runs.find((r) => r.id === id)?.status;
}

/** A run of the `scoped` fixture (two calls of a `scope: global` counter), to its end: its requests to other objects. */
export async function globalToolRun(id: string): Promise<Record<string, number>> {
  await stub(id).useShardedIndex();
  await stub(id).start({ id, worker: "scoped", input: { input: "x" }, approvalMode: "ask", budget: {} });
  expect((await settle(id)).status).toBe("succeeded");
  return stub(id).outboundRequests();
}
