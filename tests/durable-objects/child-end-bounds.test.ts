import { describe, expect, it } from "vitest";
import { boundedEnd, childBudget, MAX_CHILD_OUTPUT_BYTES, MAX_CHILD_OUTPUTS_TOTAL_BYTES } from "../../durable-objects/run/children";
import { MAX_REPORTED_USAGE } from "../../src/engine/run/usage";
import type { ChildEnd } from "../../src/engine/types/children";

const end = (bytes: number) => ({ ended: "child" as const, at: 1, run: "c", status: "succeeded" as const, output: "x".repeat(bytes) });

describe("a child's end as its parent records it (review 5)", () => {
  it("an output fits under the per-child bound while the parent has room for all its children's outputs", () => {
    expect(boundedEnd(end(1000), "c", MAX_CHILD_OUTPUTS_TOTAL_BYTES)).toMatchObject({ status: "succeeded" });
    expect(boundedEnd(end(MAX_CHILD_OUTPUT_BYTES + 1), "c", MAX_CHILD_OUTPUTS_TOTAL_BYTES)).toMatchObject({
      status: "failed",
      error: { code: "output_too_large", message: expect.stringContaining(`at most ${MAX_CHILD_OUTPUT_BYTES}`) },
    });
  });

  it("past the parent's total, a further output is recorded as a failure that says so: the journal a parent loads stays bounded", () => {
    expect(boundedEnd(end(1000), "c", 500)).toMatchObject({
      status: "failed",
      error: { code: "output_too_large", message: expect.stringContaining(`${MAX_CHILD_OUTPUTS_TOTAL_BYTES} bytes in all`) },
    });
    expect(boundedEnd(end(10), "c", -5)).toMatchObject({ status: "failed" });
    // An end without an output takes no room.
    expect(boundedEnd({ ended: "child", at: 1, run: "c", status: "failed", error: { code: "x", message: "y" } }, "c", -5)).toMatchObject({ status: "failed" });
  });

  it("hostile: a child's usage is recorded with each field a finite number from 0 to MAX_REPORTED_USAGE, or not at all when it is no object (issue 32)", () => {
    const withUsage = (usage: unknown) => ({ ended: "child", at: 1, run: "c", status: "failed", usage }) as unknown as ChildEnd;
    expect(boundedEnd(withUsage({ requests: 2, inputTokens: 30, outputTokens: 4.5, costUsd: 0.01 }), "c").usage).toEqual({
      requests: 2,
      inputTokens: 30,
      outputTokens: 4.5,
      costUsd: 0.01,
    });
    const hostile = { requests: -1, inputTokens: Number.NaN, outputTokens: Number.POSITIVE_INFINITY, costUsd: 1e300 };
    expect(boundedEnd(withUsage(hostile), "c").usage).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, costUsd: MAX_REPORTED_USAGE });
    expect(boundedEnd(withUsage({ inputTokens: "9".repeat(100_000), outputTokens: { n: 1 }, costUsd: [1] }), "c").usage).toEqual({
      requests: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
    });
    for (const none of [null, "x".repeat(10_000), 42, undefined]) expect(boundedEnd(withUsage(none), "c")).not.toHaveProperty("usage");
    // Kept on a succeeded end, and on one whose output was too large.
    const big = { ...withUsage({ requests: 1 }), status: "succeeded", output: "x".repeat(MAX_CHILD_OUTPUT_BYTES + 1) } as ChildEnd;
    expect(boundedEnd(big, "c")).toMatchObject({ status: "failed", usage: { requests: 1 } });
  });

  it("a child's budget is the engine's remainder, never past the parent's own limits nor the child worker's (issue 32)", () => {
    expect(childBudget({ maxTokens: 400, onExceed: "ask" }, { maxTokens: 1000, onExceed: "ask" })).toEqual({ maxTokens: 400, onExceed: "ask" });
    // More than the parent's limit, or not a number: the parent's.
    expect(childBudget({ maxTokens: 5000, maxCostUsd: Number.NaN }, { maxTokens: 1000, maxCostUsd: 2 })).toEqual({ maxTokens: 1000, maxCostUsd: 2 });
    // A limit the engine gave from the root worker's file (not in the parent's row) stands; the child worker's own is a further bound.
    expect(childBudget({ maxCostUsd: 0.5 }, {}, { maxCostUsd: 0.2, maxTokens: 50 })).toEqual({ maxCostUsd: 0.2, maxTokens: 50 });
    // A spawn recorded before the engine gave one: the parent's limits, as before.
    expect(childBudget(undefined, { maxTokens: 10, onExceed: "fail" })).toEqual({ maxTokens: 10, onExceed: "fail" });
  });
});
