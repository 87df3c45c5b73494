import { describe, expect, it } from "vitest";
import type { CallNode } from "../../src/engine/journal/call-tree";
import { modelKey } from "../../src/engine/journal/keys";
import { MAX_SPANS, runTimeline } from "../../src/engine/journal/timeline";
import { emptyUsage } from "../../src/engine/run/usage";

describe("runTimeline", () => {
  it("a run of 300 000 model steps: its bounds folded without overflowing, at most MAX_SPANS spans, the rest counted", () => {
    const n = 300_000;
    const steps = Array.from({ length: n }, (_, i) => ({ key: modelKey("w", i + 1), startedAt: 1000 + 10 * i, at: 1005 + 10 * i }));
    const tree: CallNode = { worker: "w", path: "w", turns: n, usage: emptyUsage(), tools: [] };
    const t = runTimeline(steps, tree, [{ start: 500, end: 900, label: "paused for approval" }], { start: 0, end: 10 * n + 2000 });
    expect(t.spans).toHaveLength(MAX_SPANS);
    expect(t.omitted).toBe(n + 2 - MAX_SPANS);
    expect(t.spans[0]).toMatchObject({ kind: "worker", start: 1000, end: 1005 + 10 * (n - 1) });
    expect(t.totals).toEqual({ model_ms: 5 * n, tool_ms: 0, paused_ms: 400, wall_ms: 10 * n + 2000 });
  });
});
