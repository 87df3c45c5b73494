import { describe, expect, it } from "vitest";
import { MemoryJournalStore, scriptedModel, type ApprovalDecision } from "../../src/engine";
import { counterKind, harness, workerFile } from "./helpers";

describe("budgets that ask", () => {
  // Each model request costs $0.30 (300k input tokens at $1/Mtok): over $0.50 after two.
  const setup = (frontmatter: string) => {
    const { kind } = counterKind();
    const model = scriptedModel((_req, n) =>
      n < 6 ? { toolCalls: [{ name: "increment", args: {} }], usage: { inputTokens: 300_000, outputTokens: 0 } } : { text: "done" },
    );
    const h = harness(
      { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  counter: { use: counter }\n${frontmatter}`) },
      { kinds: [kind], models: { "test:m": model }, prices: { "test:m": { input: 1, output: 0 } } },
    );
    return { h, model };
  };
  const decide = (store: MemoryJournalStore, key: string, d: ApprovalDecision) => store.put(key, d);

  it("crossing max_cost_usd pauses for the approver; approving extends by the same amount; rejecting the next fails with budget_exceeded", async () => {
    const { h, model } = setup("approval:\n  notify: boss@example.com");
    const store = new MemoryJournalStore();
    const req = { worker: "w", input: { input: "x" }, runId: "b1", budget: { maxCostUsd: 0.5, onExceed: "ask" as const } };
    const first = await h.run(req, store);
    expect(first.status).toBe("awaiting_approval");
    const [p] = (first as { pending: any[] }).pending;
    expect(p).toMatchObject({
      key: "w/turn:3/model/budget/approval",
      tool: "continue_past_budget",
      notify: "boss@example.com",
      description: "continue past the budget of $0.50? spent $0.60",
    });
    expect(model.requests).toBe(2);

    await decide(store, p.key, { approved: true, by: "boss" });
    const second = await h.run(req, store);
    // $1.00 allowed now: two more requests ($1.20 spent), then the next extension is asked.
    expect(second).toMatchObject({
      status: "awaiting_approval",
      pending: [{ key: "w/turn:5/model/budget/approval", description: "continue past the budget of $1.00? spent $1.20" }],
    });
    expect(model.requests).toBe(4);

    await decide(store, "w/turn:5/model/budget/approval", { approved: false, by: "boss", note: "enough" });
    const third = await h.run(req, store);
    expect(third).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
    expect((third as { error: { message: string } }).error.message).toContain("continuing past it was rejected by boss: enough");
    expect(model.requests).toBe(4);
  });

  it("crossing max_tokens with on_exceed: ask pauses for the approver too (not a failure); approving extends by max_tokens again", async () => {
    const { h, model } = setup("");
    const store = new MemoryJournalStore();
    // 300k tokens per request: over 500k after two, over 1M after four.
    const req = { worker: "w", input: { input: "x" }, runId: "bt", budget: { maxTokens: 500_000, onExceed: "ask" as const } };
    const first = await h.run(req, store);
    expect(first).toMatchObject({
      status: "awaiting_approval",
      pending: [
        {
          key: "w/turn:3/model/budget/approval",
          tool: "continue_past_budget",
          args: { max_tokens: 500_000, used_tokens: 600_000, extend_by_tokens: 500_000 },
          description: "continue past the budget of 500000 tokens? used 600000",
        },
      ],
    });
    expect(model.requests).toBe(2);
    await decide(store, "w/turn:3/model/budget/approval", { approved: true, by: "boss" });
    expect(await h.run(req, store)).toMatchObject({
      status: "awaiting_approval",
      pending: [{ key: "w/turn:5/model/budget/approval", args: { max_tokens: 1_000_000 } }],
    });
    expect(model.requests).toBe(4);
    await decide(store, "w/turn:5/model/budget/approval", { approved: false, by: "boss" });
    const third = await h.run(req, store);
    expect(third).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
    expect((third as { error: { message: string } }).error.message).toMatch(
      /1200000 tokens used, max_tokens is 500000; continuing past it was rejected by boss/,
    );
    // Without on_exceed: ask it still fails at once.
    const strict = setup("");
    expect(await strict.h.run({ worker: "w", input: { input: "x" }, budget: { maxTokens: 500_000 } })).toMatchObject({
      status: "failed",
      error: { code: "budget_exceeded" },
    });
    expect(strict.model.requests).toBe(2);
  });

  it("the worker file's budget applies when the run request sets none; on_exceed defaults to fail", async () => {
    const ask = setup("budget: { max_cost_usd: 0.5, on_exceed: ask }");
    expect(await ask.h.run({ worker: "w", input: { input: "x" } })).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "continue_past_budget" }] });
    const fail = setup("budget: { max_cost_usd: 0.5 }");
    expect(await fail.h.run({ worker: "w", input: { input: "x" } })).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
  });

  it("approval_mode approve_all never extends a budget: only a person does", async () => {
    const { h, model } = setup("budget: { max_cost_usd: 0.5, on_exceed: ask }");
    const out = await h.run({ worker: "w", input: { input: "x" }, approvalMode: "approve_all" });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "budget_exceeded", message: expect.stringContaining("a budget is extended only by a person") },
    });
    expect(model.requests).toBe(2);
  });
});
