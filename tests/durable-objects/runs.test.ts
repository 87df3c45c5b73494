import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CallNode, ToolNode } from "../../src/engine/journal/call-tree";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";

const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());

async function pausedWriter(id: string, afterDecision: unknown[]) {
  await script("pause-writer", [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "hi" } }] },
    ...afterDecision,
  ]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "post it" }, approvalMode: "ask", budget: {} });
  return settle(id);
}

describe("suspension and decisions", () => {
  it("a paused run holds one alarm, at its approval's expiry, and resumes to completion after approval", async () => {
    const view = await pausedWriter("p-approve", [{ text: "posted" }]);
    expect(view.status).toBe("awaiting_approval");
    expect(await alarmOf("p-approve")).toBe(view.approvals[0]!.expires_at);
    expect(view.approvals).toEqual([
      expect.objectContaining({
        status: "pending",
        tool: "fx_fetch",
        worker_chain: ["pause-writer"],
        notify: "approver@example.com",
        description: "pause-writer wants to call fx_fetch",
      }),
    ]);
    expect(view.approvals[0]!.expires_at - view.approvals[0]!.created_at).toBe(7 * 86_400_000);
    expect(await effectCount("p-approve")).toBe(0);

    expect(await stub("p-approve").decide(view.approvals[0]!.id, { decision: "approve", by: "test" })).toEqual({
      ok: true,
      approved: true,
      status: "approved",
      edited: false,
    });
    expect(await alarmOf("p-approve")).not.toBeNull();
    const done = await settle("p-approve");
    expect(done).toMatchObject({ status: "succeeded", output: "posted", approvals: [{ status: "approved", decided_by: "test" }] });
    expect(await effectCount("p-approve")).toBe(1);
    // Its one alarm now is retention's: deletion 30 days (RUN_RETENTION_DAYS) after it finished.
    expect(await alarmOf("p-approve")).toBe(done.updated_at + 30 * 86_400_000);
  });

  it("a rejection reaches the model as the tool's result and the run ends with the outcome it chose", async () => {
    const view = await pausedWriter("p-reject", [{ text: "understood, not posting" }]);
    await stub("p-reject").decide(view.approvals[0]!.id, { decision: "reject", note: "not now", by: "test" });
    const done = await settle("p-reject");
    expect(done).toMatchObject({ status: "succeeded", output: "understood, not posting", approvals: [{ status: "rejected", note: "not now" }] });
    expect(await effectCount("p-reject")).toBe(0);
    const second = (await modelRequests("pause-writer"))[1] as { messages: Array<{ role: string; content: string }> };
    expect(second.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "post", content: "Error: the call to fx_fetch was rejected by test: not now" });
    const tool = done.call_tree!.tools[0]!;
    expect(tool).toMatchObject({ name: "fx_fetch", status: "error", error: "the call to fx_fetch was rejected by test: not now" });
  });

  it("deciding twice is refused with 409; an unknown approval with 404", async () => {
    const view = await pausedWriter("p-twice", [{ text: "ok" }]);
    const id = view.approvals[0]!.id;
    expect((await stub("p-twice").decide(id, { decision: "approve", by: "a" })).ok).toBe(true);
    expect(await stub("p-twice").decide(id, { decision: "reject", by: "b" })).toEqual({ ok: false, status: 409, error: "approval already approved" });
    expect(await stub("p-twice").decide("ap_nope", { decision: "reject", by: "b" })).toMatchObject({ ok: false, status: 404 });
  });

  it("an expired approval counts as a rejection (410 to the decider)", async () => {
    const view = await pausedWriter("p-expired", [{ text: "too late then" }]);
    await runInDurableObject(env.RUNS.getByName("p-expired"), (_o, state) => state.storage.sql.exec("UPDATE approvals SET expires_at = 1"));
    expect(await stub("p-expired").decide(view.approvals[0]!.id, { decision: "approve", by: "late" })).toMatchObject({ ok: false, status: 410 });
    const done = await settle("p-expired");
    expect(done).toMatchObject({ status: "succeeded", output: "too late then", approvals: [{ status: "expired", decided_by: "expiry" }] });
    expect(await effectCount("p-expired")).toBe(0);
  });

  it("cancel: status cancelled, pending approvals voided, alarm deleted, later decisions 409", async () => {
    const view = await pausedWriter("p-cancel", []);
    expect(await stub("p-cancel").cancel()).toEqual({ ok: true, status: "cancelled" });
    const after = (await stub("p-cancel").status())!;
    expect(after).toMatchObject({ status: "cancelled", approvals: [{ status: "voided" }] });
    expect(await alarmOf("p-cancel")).toBe(after.updated_at + 30 * 86_400_000); // retention's, not an activation
    expect(await stub("p-cancel").decide(view.approvals[0]!.id, { decision: "approve", by: "x" })).toMatchObject({ ok: false, status: 409 });
    expect(await stub("p-cancel").cancel()).toMatchObject({ ok: false, status: 409 });
  });

  it("a decision that lands while an activation records the pause is not lost", async () => {
    const post = (n: number) => ({ id: `p${n}`, name: "fx_fetch", arguments: { url: effectUrl(`p-race-${n}`), method: "POST" } });
    await script("pause-writer", [{ tool_calls: [post(1), post(2)] }, { text: "both done" }]);
    const id = "p-race";
    await stub(id).start({ id, worker: "pause-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    expect(paused.approvals.map((a) => a.status)).toEqual(["pending", "pending"]);
    for (const a of paused.approvals) await stub(id).decide(a.id, { decision: "approve", by: "test" });
    // As if the activation after the first decision had recorded "awaiting_approval" after the second arrived:
    // (A live run's status is its newest lifecycle event: see RUN_CURRENT in durable-objects/schema.ts.)
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
      state.storage.sql.exec("UPDATE run SET status = 'awaiting_approval'");
      state.storage.sql.exec(
        "INSERT INTO events (after_step, type, data, at) VALUES ((SELECT coalesce(max(seq), 0) FROM journal), 'run_awaiting_approval', '{}', 0)",
      );
    });
    expect((await stub(id).status())!.status).toBe("awaiting_approval");
    expect(await alarmOf(id)).not.toBeNull();
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "both done" });
    expect([await effectCount("p-race-1"), await effectCount("p-race-2")]).toEqual([1, 1]);
  });

  it("start is idempotent for one run id", async () => {
    await script("pause-writer", [{ text: "no tools" }]);
    const req = { id: "p-idem", worker: "pause-writer", input: { input: "x" }, approvalMode: "ask" as const, budget: {} };
    expect(await stub("p-idem").start(req)).toEqual({ id: "p-idem", status: "queued", created: true });
    expect(await stub("p-idem").start(req)).toEqual({ id: "p-idem", status: "queued", created: false });
    expect(await settle("p-idem")).toMatchObject({ status: "succeeded", output: "no tools" });
    expect(await modelRequests("pause-writer")).toHaveLength(1);
  });

  it("a long run checkpoints: its activation ends after its budget and the alarm carries it on", async () => {
    await script("cost", [
      ...[1, 2, 3, 4].map((i) => ({ tool_calls: [{ id: `g${i}`, name: "web_fetch", arguments: { url: effectUrl(`ckpt-${i}`) } }] })),
      { text: "finished in pieces" },
    ]);
    await stub("p-ckpt").start({ id: "p-ckpt", worker: "cost", input: { input: "x" }, approvalMode: "ask", budget: {} });
    await stub("p-ckpt").setTestHooks({ activationBudgetMs: 0 });
    const count = { activations: 0, failed: 0 };
    const done = await settle("p-ckpt", { count });
    expect(done).toMatchObject({ status: "succeeded", output: "finished in pieces" });
    // 9 steps (5 model, 4 tool), at most one new step per activation with a zero budget.
    expect(count).toEqual({ activations: 9, failed: 0 });
    expect(await modelRequests("cost")).toHaveLength(5);
  });
});

const toolResults = (node: CallNode | null, name: string): number[] => {
  if (!node) return [];
  const here = node.tools.filter((t: ToolNode) => t.name === name).map((t) => Number(t.result));
  return [...here, ...node.tools.flatMap((t) => t.calls.flatMap((c) => toolResults(c, name)))];
};

describe("toolset scopes on Durable Objects", () => {
  it("two concurrent runs keep separate run-scoped state; a global counter is shared by both and by a third run", async () => {
    const start = (id: string) => stub(id).start({ id, worker: "scoped", input: { input: "x" }, approvalMode: "ask", budget: {} });
    await Promise.all([start("s-a"), start("s-b")]);
    const [a, b] = await Promise.all([settle("s-a"), settle("s-b")]);
    await start("s-c");
    const c = await settle("s-c");
    for (const run of [a, b, c]) {
      expect(run.status).toBe("succeeded");
      // Parent and child share the run's counter: 1 and 2, in either order.
      expect(toolResults(run.call_tree, "tally_increment").sort()).toEqual([1, 2]);
    }
    const shared = [a, b, c].flatMap((r) => toolResults(r.call_tree, "shared_increment"));
    expect(shared.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(toolResults(c.call_tree, "shared_increment").sort()).toEqual([5, 6]);
  });

  it("run-scoped state is deleted when the run ends", async () => {
    const rows = await runInDurableObject(env.RUNS.getByName("s-a"), (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM state").one().n);
    expect(rows).toBe(0);
  });
});
