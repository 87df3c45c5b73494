import { describe, expect, it } from "vitest";
import { effectCount, modelRequests, settle, stub } from "./helpers";
import { NESTED_EFFECTS, scriptNestedRun } from "./nested-run";

/** Runs to completion, approving the one approval when the run pauses. */
async function runThrough(id: string, fault?: { atJournalSize: number; mode: "throw" | "abort" }) {
  await stub(id).start({ id, worker: "evict-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  if (fault) await stub(id).setTestHooks({ fault });
  const count = { activations: 0, failed: 0 };
  let view = await settle(id, { count });
  let approvals = 0;
  while (view.status === "awaiting_approval") {
    const pending = view.approvals.filter((a) => a.status === "pending");
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ tool: "danger_fetch", worker_chain: ["evict-outer", "evict-inner"] });
    expect((await stub(id).decide(pending[0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
    approvals++;
    view = await settle(id, { count });
  }
  return { view, approvals, count };
}

describe("durable runs survive interruption at every step", () => {
  it("an uninterrupted run: 7 tool calls, 6 effects, 6 model requests, one approval", async () => {
    await scriptNestedRun("clean");
    const { view, approvals, count } = await runThrough("evict-clean");
    expect(count).toEqual({ activations: 2, failed: 0 });
    expect(view).toMatchObject({ status: "succeeded", output: "outer done" });
    expect(approvals).toBe(1);
    for (const e of NESTED_EFFECTS) expect(await effectCount(`clean-${e}`)).toBe(1);
    expect(await modelRequests("evict-outer")).toHaveLength(3);
    expect(await modelRequests("evict-inner")).toHaveLength(3);
    const tree = view.call_tree!;
    expect(tree.tools.map((t) => t.name).sort()).toEqual(["evict-inner", "fx_fetch", "fx_fetch", "fx_fetch"]);
    expect(tree.tools.find((t) => t.name === "evict-inner")!.calls[0]!.tools.map((t) => t.name)).toEqual(["fx_fetch", "fx_fetch", "danger_fetch"]);
  });

  for (const mode of ["throw", "abort"] as const) {
    it(`interrupted by ${mode} before each step in turn, then resumed: same output, every effect and model request exactly once`, async () => {
      await scriptNestedRun(`len-${mode}`);
      const clean = await runThrough(`evict-len-${mode}`);
      // Journal steps of a complete run: 6 model responses, 7 tool results, the approval's notification, 1 decision.
      const steps = 15;
      expect(clean.view.status).toBe("succeeded");
      for (let k = 0; k <= steps; k++) {
        const tag = `${mode}-${k}`;
        await scriptNestedRun(tag);
        const { view, approvals, count } = await runThrough(`evict-${tag}`, { atJournalSize: k, mode });
        // The fault fires before each step, and after the last one (before the outcome is saved): one failed activation more.
        expect(count, `activations with interruption at ${k}`).toEqual({ activations: 3, failed: 1 });
        expect(view, `interrupted at step ${k}`).toMatchObject({ status: "succeeded", output: "outer done" });
        expect(approvals, `approvals with interruption at ${k}`).toBe(1);
        for (const e of NESTED_EFFECTS) expect(await effectCount(`${tag}-${e}`), `effect ${e} with interruption at ${k}`).toBe(1);
        expect(await modelRequests("evict-outer"), `outer requests, interruption at ${k}`).toHaveLength(3);
        expect(await modelRequests("evict-inner"), `inner requests, interruption at ${k}`).toHaveLength(3);
      }
    });
  }
});
