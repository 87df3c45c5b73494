import { describe, expect, it } from "vitest";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";
import { NESTED_EFFECTS } from "./nested-run";

/**
 * The durability fixture (evict-outer calls evict-inner, which posts i3 through
 * danger_fetch after an approval) with tool-call ids a model chose to do harm: the
 * outer's o1 named like the inner's gated call under the old keys, ids repeated within
 * and across turns, with "/", 4 KiB long, empty.
 */
async function scriptHostile(tag: string): Promise<void> {
  const post = (name: string) => ({ url: effectUrl(`${tag}-${name}`), method: "POST", body: name });
  await script("evict-outer", [
    {
      tool_calls: [
        { id: "k", name: "evict-inner", arguments: { input: "inner work" } },
        { id: "k/evict-inner/turn:2/tool:d", name: "fx_fetch", arguments: post("o1") },
      ],
    },
    {
      tool_calls: [
        { id: "k", name: "fx_fetch", arguments: post("o2") },
        { id: "k", name: "fx_fetch", arguments: post("o3") },
      ],
    },
    { text: "outer done" },
  ]);
  await script("evict-inner", [
    {
      tool_calls: [
        { id: "a/b/../result", name: "fx_fetch", arguments: post("i1") },
        { id: "x".repeat(4096), name: "fx_fetch", arguments: post("i2") },
      ],
    },
    { tool_calls: [{ id: "d", name: "danger_fetch", arguments: post("i3") }] },
    { text: "inner done" },
  ]);
}

async function runThrough(id: string, fault?: { atJournalSize: number; mode: "throw" | "abort" }) {
  await stub(id).start({ id, worker: "evict-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  if (fault) await stub(id).setTestHooks({ fault });
  let view = await settle(id);
  let approvals = 0;
  while (view.status === "awaiting_approval") {
    const pending = view.approvals.filter((a) => a.status === "pending");
    expect(pending).toMatchObject([{ tool: "danger_fetch", worker_chain: ["evict-outer", "evict-inner"], args: { body: "i3" } }]);
    expect((await stub(id).decide(pending[0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
    approvals++;
    view = await settle(id);
  }
  return { view, approvals };
}

describe("tool-call ids a model chose to do harm, across evictions", () => {
  it("the inner gated call still asks once; every effect and model request happens once, interrupted before any step", async () => {
    // Steps of a complete run: 6 model answers, 7 tool results, the approval's notification, 1 decision.
    for (let k = -1; k <= 15; k++) {
      const tag = `hostile-${k}`;
      await scriptHostile(tag);
      const { view, approvals } = await runThrough(`ids-${tag}`, k < 0 ? undefined : { atJournalSize: k, mode: "abort" });
      expect(view, `interrupted at ${k}`).toMatchObject({ status: "succeeded", output: "outer done" });
      expect(approvals, `approvals, interrupted at ${k}`).toBe(1);
      for (const e of NESTED_EFFECTS) expect(await effectCount(`${tag}-${e}`), `effect ${e}, interrupted at ${k}`).toBe(1);
      expect(await modelRequests("evict-outer")).toHaveLength(3);
      expect(await modelRequests("evict-inner")).toHaveLength(3);
      // The run page's call tree: each call with its own result, the model's id beside its key.
      const inner = view.call_tree!.tools.find((t) => t.name === "evict-inner")!;
      expect(inner).toMatchObject({ id: "k", path: "evict-outer/turn:1/tool:1", status: "ok" });
      expect(inner.calls[0]!.tools.map((t) => [t.id.slice(0, 16), t.path.slice("evict-outer/turn:1/tool:1/evict-inner/".length), t.status])).toEqual([
        ["a/b/../result", "turn:1/tool:1", "ok"],
        ["x".repeat(16), "turn:1/tool:2", "ok"],
        ["d", "turn:2/tool:1", "ok"],
      ]);
      expect(inner.calls[0]!.tools[2]!.result).toContain("i3");
      // Watchers read each turn's calls as the model named them, with the paths their later events carry.
      const turns = (await stub(`ids-${tag}`).eventsSince())!.events.filter((e) => e.type === "turn" && e.data.path === "evict-outer");
      expect(turns[0]!.data.tool_calls).toEqual([
        { id: "k", name: "evict-inner", path: "evict-outer/turn:1/tool:1" },
        { id: "k/evict-inner/turn:2/tool:d", name: "fx_fetch", path: "evict-outer/turn:1/tool:2" },
      ]);
    }
  });
});
