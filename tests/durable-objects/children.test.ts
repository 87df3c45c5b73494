import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { childRunIdFor } from "../../src/engine/run/spawn-step";
import { SOON_MS } from "../support/test-objects";
import { effectBodies, effectCount, effectUrl, modelRequests, script, stub } from "./helpers";
import { random } from "../support/seeded-random";
import { settleTree } from "./child-runs";

const startMap = async (id: string, input: Record<string, unknown>) => {
  await stub(id).start({ id, worker: "fn-child-map", input, approvalMode: "ask", budget: {}, trigger: { kind: "api", initiator: "lead@example.com" } });
};

describe("child runs (ctx.spawn, ctx.map)", () => {
  it("a parent maps 24 children, 6 at once, through random evictions of parent and children: every child started once, each effect made once, every result joined once in input order", async () => {
    const tag = "children-map-evict";
    const url = effectUrl(tag);
    const N = 24;
    await startMap(tag, { url, count: N, concurrency: 6 });
    // The parent is evicted right after its third child's start answered, before it recorded the start.
    await stub(tag).abortAfterIo("child.start", 3);
    const rng = random(32);
    const { parent, kills } = await settleTree(tag, { kill: () => rng() < 0.15 });
    expect(kills).toBeGreaterThan(3);
    expect(parent).toMatchObject({ status: "succeeded", output: { count: N, ns: Array.from({ length: N }, (_, n) => n), sum: N * (N - 1) } });
    expect(parent.children).toHaveLength(N);
    expect(new Set(parent.children.map((c) => c.id)).size).toBe(N);
    expect(parent.children.every((c) => c.status === "succeeded" && c.id === childRunIdFor(tag, c.call_path))).toBe(true);
    for (let n = 0; n < N; n++) expect(await effectCount(`${tag}-${n}`), `effect ${n}`).toBe(1);
    // Each child was queued once (one start), knows its parent, carries its attributes and the parent's initiator.
    for (const c of parent.children.slice(0, 3)) {
      const child = (await stub(c.id).status())!;
      expect(child).toMatchObject({ status: "succeeded", parent: { run: tag, call_path: c.call_path }, attributes: { batch: "map", parent_run: tag } });
      expect(child.trigger).toEqual({ kind: "child", parent: tag, initiator: "lead@example.com" });
      const { events } = (await stub(c.id).eventsSince("0-0", 500))!;
      expect(events.filter((e) => e.type === "run_queued")).toHaveLength(1);
    }
  });

  it("a child's end is recorded once: a parent evicted after recording it is told again and answers it was a repeat; a forged or repeated end changes nothing", async () => {
    const tag = "children-once";
    const url = effectUrl(tag);
    await stub(tag).start({ id: tag, worker: "fn-child-one", input: { url }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(env.RUNS.getByName(tag));
    const [child] = (await stub(tag).status())!.children;
    expect(child).toMatchObject({ status: "running", worker: "fn-child-item" });
    expect((await stub(tag).status())!.waits).toMatchObject([{ kind: "child", name: "fn-child-item", key: child!.id }]);
    await stub(tag).abortAfterChildEnded();
    // The child ends and tells its parent, which records the end and is evicted before it answers.
    await runDurableObjectAlarm(env.RUNS.getByName(child!.id));
    expect((await stub(child!.id).status())!.status).toBe("succeeded");
    expect((await stub(tag).status())!.children[0]!.status).toBe("succeeded");
    // The child tells it again (its retry is due later: its clock moves on) and stops once answered.
    await stub(child!.id).advanceClock(SOON_MS + 3_600_000);
    await runDurableObjectAlarm(env.RUNS.getByName(child!.id));
    const end = { ended: "child", at: 1, run: child!.id, status: "failed", error: { code: "x", message: "forged" } } as const;
    expect(await stub(tag).childEnded(child!.call_path, child!.id, end)).toEqual({ ok: true, recorded: false });
    const forged = await stub(tag).childEnded(child!.call_path, "child-0000", end);
    expect(forged).toMatchObject({ ok: false });
    expect(await stub(tag).childEnded("fn-child-one/call:1", child!.id, end)).toEqual({ ok: false, error: "not a spawn's key" });
    expect(await runDurableObjectAlarm(env.RUNS.getByName(tag))).toBe(true);
    const done = (await stub(tag).status())!;
    expect(done).toMatchObject({ status: "succeeded", output: { id: child!.id, result: { n: 0, doubled: 0 } } });
    const { events } = (await stub(tag).eventsSince("0-0", 500))!;
    expect(events.filter((e) => e.type === "child_ended")).toHaveLength(0); // noted, not stored: the journal step is the record
    expect(await effectCount(`${tag}-0`)).toBe(1);
  });

  it("a child's failure is the parent's error, naming the child", async () => {
    const tag = "children-fail";
    await stub(tag).start({ id: tag, worker: "fn-child-one", input: { url: effectUrl(tag), fail: true }, approvalMode: "ask", budget: {} });
    const { parent } = await settleTree(tag);
    expect(parent.status).toBe("succeeded");
    expect((parent.output as { error: string }).error).toMatch(/^the child run child-[0-9a-f]{40} of fn-child-item failed: .*item 0 failed on purpose/);
  });

  it("cancelling the parent mid-way cancels every unfinished child, and starts no more", async () => {
    const tag = "children-cancel";
    const N = 20;
    await startMap(tag, { url: effectUrl(tag), count: N, concurrency: 5 });
    let cancelled = false;
    const { parent } = await settleTree(tag, {
      beforeRound: async (p) => {
        if (!cancelled && p.children.filter((c) => c.status === "succeeded").length >= 4 && p.children.some((c) => c.status === "running")) {
          expect((await stub(tag).cancel("enough")).ok).toBe(true);
          cancelled = true;
        }
      },
    });
    expect(parent.status).toBe("cancelled");
    expect(parent.children.length).toBeLessThan(N);
    // The parent's end cancels its unfinished children from its next alarm (its outbox).
    expect(await runDurableObjectAlarm(env.RUNS.getByName(tag))).toBe(true);
    const statuses = await Promise.all(parent.children.map(async (c) => (await stub(c.id).status())!.status));
    expect(statuses.every((s) => s === "succeeded" || s === "cancelled")).toBe(true);
    expect(statuses.filter((s) => s === "cancelled").length).toBeGreaterThan(0);
    for (const c of parent.children) expect(c.status, c.id).not.toBe("running");
  });

  it("a child's approval is decided from the inbox and the parent continues; the child carries the parent's approval mode", async () => {
    const tag = "children-approve";
    const notify = { url: { url: effectUrl(`${tag}-notify`), on: ["ended" as const, "paused" as const] } };
    await stub(tag).start({
      id: tag,
      worker: "fn-child-map",
      input: { url: effectUrl(tag), count: 3, concurrency: 3, gated: 1 },
      approvalMode: "ask",
      budget: {},
      notify,
    });
    let decided = 0;
    const { parent } = await settleTree(tag, {
      beforeRound: async (p) => {
        for (const c of p.children) {
          const child = (await stub(c.id).status())!;
          const pending = child.approvals.find((a) => a.status === "pending");
          if (!pending) continue;
          // The inbox lists it (the run index), under its parent's attribute.
          const inbox = await env.RUN_INDEX.getByName("index").pendingApprovals();
          expect(inbox.approvals.some((a: { run_id: string }) => a.run_id === c.id)).toBe(true);
          expect((await stub(c.id).decide(pending.id, { decision: "approve", by: "test" })).ok).toBe(true);
          decided++;
        }
      },
    });
    expect(decided).toBe(1);
    expect(parent).toMatchObject({ status: "succeeded", output: { count: 3, sum: 6 } });
    expect(await effectCount(`${tag}-1`)).toBe(1);
    // The parent's completion webhook heard of the child's pause for approval: the same people learn of it.
    const gated = parent.children.find((c) => c.call_path.endsWith("spawn:2"))!;
    const posted = (await effectBodies(`${tag}-notify`)).map((b) => JSON.parse(b) as { type: string; run: { id: string; status: string } });
    expect(posted.some((p) => p.run.id === gated.id && p.type === "run.paused" && p.run.status === "awaiting_approval")).toBe(true);

    const auto = "children-approve-all";
    await stub(auto).start({
      id: auto,
      worker: "fn-child-map",
      input: { url: effectUrl(auto), count: 2, concurrency: 2, gated: 0 },
      approvalMode: "approve_all",
      budget: {},
    });
    expect((await settleTree(auto)).parent).toMatchObject({ status: "succeeded", approval_mode: "approve_all", output: { count: 2 } });
  });

  it("hostile: a concurrency past the bound fails the parent with the reason, and starts nothing", async () => {
    const tag = "children-bad";
    await stub(tag).start({ id: tag, worker: "fn-child-map", input: { url: effectUrl(tag), count: 1, concurrency: 99 }, approvalMode: "ask", budget: {} });
    const { parent } = await settleTree(tag);
    expect(parent).toMatchObject({ status: "failed" });
    expect(parent.error!.message).toContain("concurrency is a whole number from 1 to 50");
    expect(parent.children).toEqual([]);

    // A child's input past what POST /runs takes (1 MiB as JSON) is refused by the start, naming the size: nothing starts.
    const big = "children-big";
    await stub(big).start({ id: big, worker: "fn-child-one", input: { url: "x".repeat(1024 * 1024 + 10) }, approvalMode: "ask", budget: {} });
    const refused = (await settleTree(big)).parent;
    expect(refused.status).toBe("failed");
    expect(refused.error!.message).toMatch(/starting a child run of fn-child-item: the input is \d+ bytes as stored JSON; at most 1048576 bytes are accepted/);
    expect(refused.children).toEqual([]);
  });

  it("a workers toolset with run: child makes the model's call a child run: the parent waits idle, the child's result is the tool's, its failure the tool's error", async () => {
    const tag = "children-toolset";
    const url = effectUrl(tag);
    await script("child-caller", [
      { tool_calls: [{ id: "a", name: "fn-child-item", arguments: { url, n: 3 } }] },
      { tool_calls: [{ id: "b", name: "fn-child-item", arguments: { url, n: 4, fail: true } }] },
      { text: "both asked" },
    ]);
    await stub(tag).start({ id: tag, worker: "child-caller", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(env.RUNS.getByName(tag));
    const waiting = (await stub(tag).status())!;
    expect(waiting).toMatchObject({ status: "waiting", waits: [{ kind: "child", name: "fn-child-item" }] });
    const { parent } = await settleTree(tag);
    expect(parent).toMatchObject({ status: "succeeded", output: "both asked" });
    expect(parent.children.map((c) => [c.call_path, c.status])).toEqual([
      ["child-caller/turn:1/tool:1/spawn:1", "succeeded"],
      ["child-caller/turn:2/tool:1/spawn:1", "failed"],
    ]);
    const requests = (await modelRequests("child-caller")) as Array<{ messages: Array<{ role: string; content: unknown }> }>;
    expect(requests).toHaveLength(3); // each model request once, however often the parent replayed
    const tools = requests[2]!.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
    expect(tools[0]).toContain('\\"doubled\\":6');
    expect(tools[1]).toMatch(/the child run child-[0-9a-f]{40} of fn-child-item failed: .*item 4 failed on purpose/);
    for (const n of [3, 4]) expect(await effectCount(`${tag}-${n}`)).toBe(1);
  });
});
