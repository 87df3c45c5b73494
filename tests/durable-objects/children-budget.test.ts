import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runUsage } from "../../durable-objects/run/usage";
import { Sql } from "../../durable-objects/sql";
import { MAX_REPORTED_USAGE } from "../../src/engine/run/usage";
import type { Budget } from "../../src/engine/types/budget";
import type { Usage } from "../../src/engine/types/usage";
import { random } from "../support/seeded-random";
import { settleTree } from "./child-runs";
import { stub } from "./helpers";

const start = (id: string, input: Record<string, unknown>, budget: Budget = {}) =>
  stub(id).start({ id, worker: "fn-budget-parent", input, approvalMode: "ask", budget });

/** The tokens and requests of one fn-budget-child request (test:tools is free): a child run of one ask, alone. */
async function oneAsk(tag: string): Promise<Usage> {
  await stub(tag).start({ id: tag, worker: "fn-budget-child", input: { asks: 1 }, approvalMode: "ask", budget: {} });
  const { parent } = await settleTree(tag);
  expect(parent.status).toBe("succeeded");
  return parent.usage!;
}

/** One value of the run's own SQLite (what the view does not show: its budget, its end event's data). */
const stored = <T>(id: string, query: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => JSON.parse(state.storage.sql.exec<{ v: string }>(query).one().v) as T);
const budgetOf = (id: string) => stored<Budget>(id, "SELECT budget AS v FROM run");

const times = (u: Usage, n: number): Usage => ({ requests: u.requests * n, inputTokens: u.inputTokens * n, outputTokens: u.outputTokens * n, costUsd: 0 });
const tokens = (u: Usage) => u.inputTokens + u.outputTokens;

describe("child runs and budgets (issue 32: budgets carry over)", () => {
  it("a parent's usage is its own and its children's, exactly, through evictions of parent and children; its end event and webhook say the same", async () => {
    const ask = await oneAsk("budget-calibrate-1");
    expect(ask.requests).toBe(1);
    expect(tokens(ask)).toBeGreaterThan(10);
    const tag = "budget-rollup";
    // 1 request of its own, 5 children of 2 requests each, 2 at once.
    await start(tag, { own: 1, count: 5, asks: 2, concurrency: 2 }, { maxTokens: 1_000_000 });
    const rng = random(7);
    const { parent, kills } = await settleTree(tag, { kill: () => rng() < 0.2 });
    expect(kills).toBeGreaterThan(0);
    expect(parent.status).toBe("succeeded");
    expect(parent.children).toHaveLength(5);
    for (const c of parent.children) expect((await stub(c.id).status())!.usage).toEqual(times(ask, 2));
    expect(parent.usage).toEqual(times(ask, 11));
    // The engine's own count (its end event, which the completion webhook and the run index read) is the same: no replay counted a child twice.
    expect(await stored(tag, "SELECT data AS v FROM events WHERE type = 'run_succeeded'")).toMatchObject({ usage: times(ask, 11) });
    // The run index and the logs count the journal without loading it (runUsage): the children's ends are in that count too.
    const counted = await runInDurableObject(env.RUNS.getByName(tag), (_o, state) => runUsage(new Sql(state.storage.sql), null));
    expect(counted).toEqual(times(ask, 11));
  });

  it("a child starts with what its parent has left and fails budget_exceeded past it; a parent over its budget starts no further child", async () => {
    const ask = await oneAsk("budget-calibrate-2");
    const x = tokens(ask);
    // The parent may spend 2.5 asks: its own ask leaves 1.5 for its first child, which asks a second time
    // (1 < 1.5) and is refused a third (2 ≥ 1.5); then the parent has used 3 asks, and spawns no second child.
    const max = 2 * x + Math.floor(x / 2);
    const tag = "budget-carry";
    await start(tag, { own: 1, count: 3, asks: 3, oneByOne: true }, { maxTokens: max });
    const { parent } = await settleTree(tag);
    expect(parent.children).toHaveLength(1);
    const child = (await stub(parent.children[0]!.id).status())!;
    expect(await budgetOf(child.id)).toEqual({ maxTokens: max - x });
    expect(child).toMatchObject({ status: "failed", error: { code: "budget_exceeded" }, usage: times(ask, 2) });
    expect(parent).toMatchObject({ status: "failed", error: { code: "budget_exceeded" }, usage: times(ask, 3) });
    expect(parent.error!.message).toContain(`${3 * x} tokens used, max_tokens is ${max}`);
  });

  it("with on_exceed: ask, a spawn over the budget asks to continue; approved, the child gets the extended remainder; rejected, the parent ends", async () => {
    const ask = await oneAsk("budget-calibrate-3");
    const x = tokens(ask);
    const max = 2 * x + Math.floor(x / 2);
    const tag = "budget-ask";
    // Each child asks twice (within the 1.5 asks it is given), so the parent is over budget at its second spawn.
    await start(tag, { own: 1, count: 3, asks: 2, oneByOne: true }, { maxTokens: max, onExceed: "ask" });
    const decisions: boolean[] = [true, false];
    const { parent } = await settleTree(tag, {
      beforeRound: async (p) => {
        const pending = p.approvals.find((a) => a.status === "pending");
        if (!pending) return;
        expect(pending).toMatchObject({ tool: "continue_past_budget", call_path: expect.stringMatching(/\/spawn:\d+\/budget$/) });
        expect((await stub(tag).decide(pending.id, { decision: decisions.shift() ? "approve" : "reject", by: "test" })).ok).toBe(true);
      },
    });
    expect(decisions).toEqual([]);
    expect(parent.children).toHaveLength(2);
    const budgets = await Promise.all(parent.children.map((c) => budgetOf(c.id)));
    // The second child: twice the limit (one extension approved) less the three asks used by then.
    expect(budgets).toEqual([
      { maxTokens: max - x, onExceed: "ask" },
      { maxTokens: 2 * max - 3 * x, onExceed: "ask" },
    ]);
    expect(parent).toMatchObject({ status: "failed", error: { code: "budget_exceeded" }, usage: times(ask, 5) });
    expect(parent.error!.message).toContain("continuing past it was rejected by test");
  });

  it("a child cancelled mid-way tells its parent what it had used by then", async () => {
    const ask = await oneAsk("budget-calibrate-5");
    const tag = "budget-cancelled";
    await start(tag, { own: 1, count: 1, asks: 2, oneByOne: true, wait: true });
    await runDurableObjectAlarm(env.RUNS.getByName(tag));
    const [child] = (await stub(tag).status())!.children;
    await runDurableObjectAlarm(env.RUNS.getByName(child!.id));
    expect((await stub(child!.id).status())!).toMatchObject({ status: "waiting", usage: times(ask, 2) });
    expect((await stub(child!.id).cancel("enough")).ok).toBe(true);
    const { parent } = await settleTree(tag);
    expect(parent).toMatchObject({ status: "succeeded", usage: times(ask, 3), children: [{ status: "cancelled" }] });
  });

  it("hostile: a child's end with a usage of negative, NaN, infinite or text fields is recorded bounded; the parent's usage stays finite", async () => {
    const ask = await oneAsk("budget-calibrate-4");
    const tag = "budget-hostile";
    await start(tag, { own: 1, count: 1, asks: 1, oneByOne: true });
    await runDurableObjectAlarm(env.RUNS.getByName(tag));
    const [child] = (await stub(tag).status())!.children;
    const usage = { requests: -3, inputTokens: Number.NaN, outputTokens: "9".repeat(100_000), costUsd: 1e300 } as unknown as Usage;
    const forged = { ended: "child" as const, at: 1, run: child!.id, status: "succeeded" as const, output: { asks: 1 }, usage };
    expect(await stub(tag).childEnded(child!.call_path, child!.id, forged)).toEqual({ ok: true, recorded: true });
    expect((await stub(tag).status())!.usage).toEqual({ ...ask, costUsd: MAX_REPORTED_USAGE });
    // A usage that is no object adds nothing; the real end, told later, is a repeat.
    const other = "budget-hostile-2";
    await start(other, { own: 1, count: 1, asks: 1, oneByOne: true });
    await runDurableObjectAlarm(env.RUNS.getByName(other));
    const [second] = (await stub(other).status())!.children;
    const text = { ...forged, run: second!.id, usage: "x".repeat(10_000) as unknown as Usage };
    expect(await stub(other).childEnded(second!.call_path, second!.id, text)).toEqual({ ok: true, recorded: true });
    const { parent } = await settleTree(other);
    expect(parent).toMatchObject({ status: "succeeded", usage: ask });
    const { parent: first } = await settleTree(tag);
    expect(first).toMatchObject({ status: "succeeded", usage: { ...ask, costUsd: MAX_REPORTED_USAGE } });
    expect(Object.values(first.usage!).every(Number.isFinite)).toBe(true);
  });
});
