import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";

const object = (id: string) => env.RUNS.getByName(id);
const alarmOf = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());
/** Moves an approval's expiry into the past, as if its time had come (the object's clock is the real one). */
const expireNow = (id: string, approvalId: string) =>
  runInDurableObject(object(id), (_o, state) => state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, approvalId));

/**
 * A run that fails while an approval is pending: in one turn the parent calls a
 * gated POST and a nested worker whose model answers 400 (a fatal model error).
 * The script would let a revived run finish: the child answers on a second request.
 */
async function failedWithPendingApproval(id: string) {
  await script("void-parent", [
    {
      tool_calls: [
        { id: "post", name: "gate_fetch", arguments: { url: effectUrl(id), method: "POST" } },
        { id: "child", name: "void-child", arguments: { input: "work" } },
      ],
    },
    { text: "revived" },
  ]);
  await script("void-child", [{ status: 400, body: { error: { message: "bad request" } } }, { text: "child ok" }]);
  await stub(id).start({ id, worker: "void-parent", input: { input: "go" }, approvalMode: "ask", budget: {} });
  return settle(id);
}

describe("a run that ended voids its approvals", () => {
  it("failing while an approval is pending voids it; a late decision is refused with 409 and revives nothing", async () => {
    const id = "void-failed";
    const view = await failedWithPendingApproval(id);
    expect(view.status).toBe("failed");
    expect(view.error).toMatchObject({ code: "model_error" });
    expect(view.approvals).toEqual([expect.objectContaining({ tool: "gate_fetch", status: "voided" })]);

    for (const decision of ["approve", "reject"] as const) {
      expect(await stub(id).decide(view.approvals[0]!.id, { decision, by: "late" })).toEqual({
        ok: false,
        status: 409,
        error: "the run already failed; its approvals are void",
      });
    }
    // The one alarm left is retention's; running it early revives nothing (checked below).
    expect(await alarmOf(id)).toBe(view.updated_at + 30 * 86_400_000);
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    expect(await alarmOf(id)).toBe(view.updated_at + 30 * 86_400_000);
    expect((await stub(id).status())!).toMatchObject({ status: "failed", approvals: [{ status: "voided", decided_by: null }] });
    expect(await effectCount(id)).toBe(0);
    expect(await modelRequests("void-child")).toHaveLength(1);
  });

  it("succeeding voids what is still pending; deciding a pending approval of an ended run (older data) is refused too", async () => {
    const id = "void-succeeded";
    await script("expiry-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "done" }]);
    await stub(id).start({ id, worker: "expiry-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    const approvalId = paused.approvals[0]!.id;
    // A run recorded as ended by code before this rule: its approval still says pending.
    await runInDurableObject(object(id), (_o, state) => state.storage.sql.exec("UPDATE run SET status = 'succeeded'"));
    expect(await stub(id).decide(approvalId, { decision: "approve", by: "late" })).toEqual({
      ok: false,
      status: 409,
      error: "the run already succeeded; its approvals are void",
    });
    expect(await effectCount(id)).toBe(0);
  });
});

describe("approvals expire without anybody acting", () => {
  async function paused(id: string, calls: number, after: unknown[]) {
    const post = (n: number) => ({ id: `p${n}`, name: "fx_fetch", arguments: { url: effectUrl(`${id}-${n}`), method: "POST" } });
    await script("expiry-writer", [{ tool_calls: Array.from({ length: calls }, (_, i) => post(i + 1)) }, ...after]);
    await stub(id).start({ id, worker: "expiry-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const view = await settle(id);
    expect(view.status).toBe("awaiting_approval");
    return view;
  }

  it("a pause arms one alarm at the approval's expiry; at that time the alarm records a rejection the model sees", async () => {
    const id = "exp-alarm";
    const view = await paused(id, 1, [{ text: "nobody answered, so I did not post" }]);
    const approval = view.approvals[0]!;
    expect(await alarmOf(id)).toBe(approval.expires_at);
    expect((await stub(id).storageStats()).alarmsSet).toBe(2); // start, and the pause

    await expireNow(id, approval.id);
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", output: "nobody answered, so I did not post", approvals: [{ status: "expired", decided_by: "expiry" }] });
    const last = (await modelRequests("expiry-writer")).at(-1) as { messages: Array<{ role: string; content: string }> };
    expect(last.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "p1",
      content: "Error: the call to fx_fetch was rejected by expiry: the approval expired before anyone decided",
    });
    expect(await effectCount(`${id}-1`)).toBe(0);
    // The rejection is a journal step under the approval's key, like any decision (marked expired: the approval's status is read from it).
    const step = await runInDurableObject(
      object(id),
      (_o, state) => state.storage.sql.exec("SELECT value FROM journal WHERE key = ?", "expiry-writer/turn:1/tool:1/approval").one().value as string,
    );
    expect(JSON.parse(step)).toEqual({
      approved: false,
      by: "expiry",
      note: "the approval expired before anyone decided",
      expired: true,
      args_hash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    // And a decision arriving after that answers as the expiry did: 410.
    expect(await stub(id).decide(approval.id, { decision: "approve", by: "late" })).toEqual({
      ok: false,
      status: 410,
      error: "the approval expired; it counts as a rejection",
    });
  });

  it("an alarm before the expiry records nothing: the run stays paused and the alarm is re-armed at the expiry", async () => {
    const id = "exp-early";
    const view = await paused(id, 1, []);
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    const after = (await stub(id).status())!;
    expect(after).toMatchObject({ status: "awaiting_approval", approvals: [{ status: "pending" }] });
    expect(await alarmOf(id)).toBe(view.approvals[0]!.expires_at);
  });

  it("a decision before expiry wins: a later alarm does not expire it", async () => {
    const id = "exp-decided";
    const view = await paused(id, 1, [{ text: "posted" }]);
    const approval = view.approvals[0]!;
    expect(await stub(id).decide(approval.id, { decision: "approve", by: "test" })).toEqual({ ok: true, approved: true, status: "approved", edited: false });
    // The resuming activation runs only after the expiry time has passed.
    await expireNow(id, approval.id);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted", approvals: [{ status: "approved", decided_by: "test" }] });
    expect(await effectCount(`${id}-1`)).toBe(1);
  });

  it("two approvals with different expiries: each resolves at its own time, one alarm per pause", async () => {
    const id = "exp-two";
    const view = await paused(id, 2, [{ text: "neither posted" }]);
    const [first, second] = view.approvals;
    // The second expires a minute later than the first.
    await runInDurableObject(object(id), (_o, state) =>
      state.storage.sql.exec("UPDATE approvals SET expires_at = expires_at + 60000 WHERE id = ?", second!.id),
    );
    await stub(id).resume(); // 409 (waiting for a human); the alarm stays at the earliest expiry
    expect(await alarmOf(id)).toBe(first!.expires_at);

    await expireNow(id, first!.id);
    await settle(id);
    const mid = (await stub(id).status())!;
    expect(mid.status).toBe("awaiting_approval");
    expect(mid.approvals.map((a) => a.status)).toEqual(["expired", "pending"]);
    expect(await alarmOf(id)).toBe(second!.expires_at + 60_000);

    await expireNow(id, second!.id);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "neither posted", approvals: [{ status: "expired" }, { status: "expired" }] });
    expect([await effectCount(`${id}-1`), await effectCount(`${id}-2`)]).toEqual([0, 0]);
  });

  it("deciding an expired approval that the alarm has not resolved yet records the same rejection (410)", async () => {
    const id = "exp-lazy";
    const view = await paused(id, 1, [{ text: "too late" }]);
    await expireNow(id, view.approvals[0]!.id);
    expect(await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "late" })).toEqual({
      ok: false,
      status: 410,
      error: "the approval expired; it counts as a rejection",
    });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "too late", approvals: [{ status: "expired", decided_by: "expiry" }] });
    expect(await effectCount(`${id}-1`)).toBe(0);
  });
});
