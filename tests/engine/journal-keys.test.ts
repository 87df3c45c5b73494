import { describe, expect, it } from "vitest";
import { copiedFrom, keyProblem, MAX_FORK_KEY } from "../../src/engine/journal/fork-prefix";
import { journalUsage } from "../../src/engine/journal/run-usage";
import {
  approvalKey,
  approvalRuleKey,
  attemptKey,
  budgetPath,
  creationKey,
  effectKey,
  forEachEffectSlot,
  gatedStep,
  keyWriter,
  MAX_STEP_NAME,
  messageKey,
  MODEL_STEP_LIKE,
  modelKey,
  notifyKey,
  parseKey,
  resultKey,
  stepKey,
  stepKind,
  toolCallKeys,
  toolsKey,
  waitEndOf,
} from "../../src/engine/journal/keys";

const call = "w/turn:2/tool:3";

describe("journal keys", () => {
  it("tool calls are keyed by position in grammar 2, by the model's ids (made unique) in grammar 1", () => {
    const ids = [{ id: "a/b" }, { id: "c" }, { id: "c" }];
    expect(toolCallKeys(2, "w", 2, ids)).toEqual(["w/turn:2/tool:1", "w/turn:2/tool:2", "w/turn:2/tool:3"]);
    expect(toolCallKeys(1, "w", 2, ids)).toEqual(["w/turn:2/tool:a/b", "w/turn:2/tool:c", "w/turn:2/tool:c~2"]);
  });

  it("every key the engine builds parses back to what it is", () => {
    expect(parseKey(modelKey("w/turn:1/tool:1/child", 3))).toEqual({ kind: "model", frame: "w/turn:1/tool:1/child", turn: 3 });
    for (const [key, kind] of [
      [resultKey(call), "result"],
      [approvalKey(call), "approval"],
      [notifyKey(call), "notify"],
      [creationKey(call), "creation"],
      [approvalRuleKey(call), "approval_rule"],
    ] as const) {
      expect(parseKey(key)).toEqual({ kind, call });
    }
    expect(parseKey(effectKey(call, "ask", 4))).toEqual({ kind: "effect", call, effect: "ask", n: 4 });
    expect(parseKey(toolsKey("w", "gh"))).toEqual({ kind: "tools", frame: "w", instance: "gh" });
    expect(parseKey(stepKey(2, call, "attachments"))).toEqual({ kind: "step", call, name: "attachments" });
    const model = modelKey("w", 3);
    expect(parseKey(approvalKey(budgetPath(model)))).toEqual({ kind: "budget_approval", call: budgetPath(model), gated: model });
    const ask = effectKey(call, "ask", 1);
    expect(parseKey(approvalKey(budgetPath(ask)))).toMatchObject({ kind: "budget_approval", gated: ask });
    // A child run's start is checked against the budget too (issue 32): its approval counts as an extension.
    const spawn = effectKey(call, "spawn", 2);
    expect(parseKey(approvalKey(budgetPath(spawn)))).toEqual({ kind: "budget_approval", call: budgetPath(spawn), gated: spawn });
    expect(gatedStep(notifyKey(budgetPath(spawn)))).toBe(spawn);
    // Any other effect's "budget" call is an ordinary approval.
    expect(parseKey(approvalKey(budgetPath(effectKey(call, "call", 2))))).toMatchObject({ kind: "approval" });
  });

  it("a retried call's failed try is `attempt:<n>` under the call (n ≥ 1), written by the engine, gating nothing", () => {
    expect(parseKey(attemptKey(call, 2))).toEqual({ kind: "attempt", call, n: 2 });
    expect(parseKey(`${attemptKey(call, 1)}/result`)).toEqual({ kind: "result", call: attemptKey(call, 1) });
    for (const bad of [`${call}/attempt:0`, `${call}/attempt:`, `${call}/attempt:1x`, `${call}/attempt:-1`])
      expect(parseKey(bad), bad).toEqual({ kind: "other" });
    expect(stepKind(attemptKey(call, 1))).toBe("attempt");
    expect(keyWriter(attemptKey(call, 1))).toBe("engine");
    expect(gatedStep(attemptKey(call, 1))).toBeUndefined();
    expect(waitEndOf(attemptKey(call, 1))).toBeUndefined();
    // Not a ctx effect slot: a tool's own effects keep their numbers.
    const slots: string[] = [];
    forEachEffectSlot(attemptKey(call, 3), (c, n, kind) => slots.push(`${c} ${n} ${kind}`));
    expect(slots).toEqual([]);
  });

  it("a conversation's message is a step of the root alone; one under a deeper call, or without a number, is no key", () => {
    expect(parseKey(messageKey("w", 2))).toEqual({ kind: "message", frame: "w", n: 2 });
    expect(parseKey(`${call}/child/message:2`)).toEqual({ kind: "other" });
    expect(parseKey("w/message:")).toEqual({ kind: "other" });
    expect(parseKey("w/message:2x")).toEqual({ kind: "other" });
    expect(keyProblem(messageKey("w", 2), "w", 2)).toBeUndefined();
  });

  it("a budget approval is one under a model request, never an approval whose call path ends in budget", () => {
    expect(parseKey("w/turn:1/tool:x/budget/approval")).toEqual({ kind: "approval", call: "w/turn:1/tool:x/budget" });
    expect(parseKey("w/turn:x/model/budget/approval").kind).toBe("approval");
    expect(parseKey("budget/approval").kind).toBe("approval");
    expect(parseKey("w/turn:1/model/x")).toEqual({ kind: "other" });
    expect(parseKey("w/turn:/model")).toEqual({ kind: "other" });
    expect(parseKey("w/turn:1a/model")).toEqual({ kind: "other" });
  });

  it("a wait's end is a `wait:<n>` effect's step or a question's decision; a step named like one, or another effect's decision, is not", () => {
    expect(waitEndOf(effectKey(call, "wait", 2))).toEqual({ kind: "wait", call });
    expect(waitEndOf(approvalKey(effectKey(call, "human", 1)))).toEqual({ kind: "question", call });
    for (const key of [
      stepKey(2, call, "wait:1"),
      approvalKey(call),
      notifyKey(effectKey(call, "human", 1)),
      approvalKey(effectKey(call, "wait", 1)),
      `${effectKey(call, "wait", 1)}/result`,
      `${call}/wait:x`,
    ])
      expect(waitEndOf(key), key).toBeUndefined();
  });

  it("a ctx.step name is one segment: '/' and '%' encoded, a long name cut and made unique by a hash; grammar 1 keeps it raw", () => {
    for (const name of ["a/b", "x/budget/approval", "../result", "%2F", "", ":", "~1"]) {
      const key = stepKey(2, call, name);
      expect(parseKey(key), name).toMatchObject({ kind: "step", call });
      expect(key.split("/").length, name).toBe(call.split("/").length + 1);
    }
    expect(stepKey(2, call, "a/b")).toBe(`${call}/step:a%2Fb`);
    expect(stepKey(2, call, "a%2Fb")).toBe(`${call}/step:a%252Fb`);
    const long = "x".repeat(4096);
    const longKey = stepKey(2, call, long);
    expect(longKey.length - call.length - "/step:".length).toBeLessThanOrEqual(MAX_STEP_NAME);
    expect(stepKey(2, call, `${long}y`)).not.toBe(longKey);
    expect(stepKey(2, call, "x".repeat(MAX_STEP_NAME))).toBe(`${call}/step:${"x".repeat(MAX_STEP_NAME)}`);
    // A cut never splits a character: the key stays text the store keeps as written.
    const cut = stepKey(2, call, `${"x".repeat(63)}${"😀".repeat(100)}`);
    expect(new TextDecoder().decode(new TextEncoder().encode(cut))).toBe(cut);
    expect(stepKey(1, call, "a/b")).toBe(`${call}/step:a/b`);
  });

  it("model steps: the SQL prefilter (MODEL_STEP_LIKE) selects every one, journalUsage counts exactly them", () => {
    const call = "root/turn:1/tool:0/helper";
    const models = [modelKey("root", 3), effectKey(call, "ask", 2), modelKey(`${call}/agent:1`, 1)];
    const others = [
      effectKey(call, "call", 1),
      stepKey(2, call, "model"),
      stepKey(2, call, "ask:1"),
      resultKey(`${call}/ask:1`),
      approvalKey(budgetPath(modelKey("root", 1))),
    ];
    // SQLite's LIKE: % is any run of characters, matched case-insensitively.
    const like = (pattern: string, key: string) =>
      new RegExp(
        `^${pattern
          .split("%")
          .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*")}$`,
        "is",
      ).test(key);
    for (const key of models)
      expect(
        MODEL_STEP_LIKE.some((p) => like(p, key)),
        key,
      ).toBe(true);
    const answer = { usage: { inputTokens: 1, outputTokens: 2 }, costUsd: 0.5 };
    const usage = journalUsage([...models, ...others].map((k) => [k, answer] as [string, unknown]));
    expect(usage).toEqual({ requests: models.length, inputTokens: models.length, outputTokens: 2 * models.length, costUsd: 0.5 * models.length });
  });
});

describe("a fork's prefix (keys.ts, fork-prefix.ts)", () => {
  it("a decision or notification gates its call's result, a budget's its model request; nothing else gates", () => {
    expect(gatedStep(approvalKey(call))).toBe(resultKey(call));
    expect(gatedStep(notifyKey(call))).toBe(resultKey(call));
    expect(gatedStep(approvalRuleKey(call))).toBe(resultKey(call));
    const model = modelKey("w", 2);
    expect(gatedStep(approvalKey(budgetPath(model)))).toBe(model);
    expect(gatedStep(notifyKey(budgetPath(model)))).toBe(model);
    // A call whose path merely ends in "budget" (a worker named so) gates its own result.
    expect(gatedStep(approvalKey("w/turn:1/tool:1/budget"))).toBe("w/turn:1/tool:1/budget/result");
    for (const key of [model, resultKey(call), stepKey(2, call, "x/approval"), effectKey(call, "now", 1)]) expect(gatedStep(key)).toBeUndefined();
  });

  it("copies every step but decisions, asking rules and notifications whose gated step is not in the prefix", () => {
    const done = "w/turn:1/tool:1";
    const prefix = new Set([
      modelKey("w", 1),
      approvalRuleKey(call),
      approvalKey(call),
      notifyKey(call),
      approvalRuleKey(done),
      approvalKey(done),
      resultKey(done),
    ]);
    const copies = copiedFrom(prefix, 2);
    // A call the fork runs again is asked about again, under the rule that matches it then.
    expect([...prefix].filter(copies)).toEqual([modelKey("w", 1), approvalRuleKey(done), approvalKey(done), resultKey(done)]);
  });

  it("copies a question's email and answer (the effect itself, before `at`), but not in grammar 1, where a model could name a call `human:1`", () => {
    const question = effectKey(call, "human", 1);
    const prefix = new Set([modelKey("w", 1), notifyKey(question), approvalKey(question)]);
    expect([...prefix].filter(copiedFrom(prefix, 2))).toEqual([...prefix]);
    // Grammar 1: `w/turn:1/human:1` may be a tool call the model named so; its approval still gates its result.
    expect([...prefix].filter(copiedFrom(prefix, 1))).toEqual([modelKey("w", 1)]);
  });

  it("leaves the source run's undos, its undoing and its unended children to it: a fork undoes only what it made, and starts its own children (review 5)", () => {
    const undo = `${call}/undo`;
    const undone = resultKey(`${call}/undone`);
    const ended = effectKey("w", "spawn", 1);
    const running = effectKey("w", "spawn", 2);
    const prefix = new Set([modelKey("w", 1), resultKey(call), undo, "w/compensation", undone, ended, `${ended}/end`, running]);
    expect([...prefix].filter(copiedFrom(prefix, 2))).toEqual([modelKey("w", 1), resultKey(call), ended, `${ended}/end`]);
  });

  it("a fork point is a step key under the root, of bounded length, with no empty, '.' or '..' segment (grammar 2)", () => {
    expect(keyProblem(modelKey("w", 1), "w", 2)).toBeUndefined();
    expect(keyProblem(stepKey(2, call, "../../x"), "w", 2)).toBeUndefined(); // encoded: one segment
    for (const bad of [
      "w",
      "w2/turn:1/model",
      "x/w/turn:1/model",
      "w/../w/turn:1/model",
      "w//turn:1/model",
      "w/turn:1/model/",
      "w/turn:1",
      `w/${"a".repeat(MAX_FORK_KEY)}/result`,
    ])
      expect(keyProblem(bad, "w", 2), bad).toBeDefined();
    expect(keyProblem("w/turn:1/tool:a/../b/result", "w", 1)).toBeUndefined(); // grammar 1 kept the model's ids as they came
  });
});
