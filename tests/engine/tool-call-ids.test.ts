import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, MemoryJournalStore, scriptedModel, tool, type ApprovalDecision, type ModelRequest, type ScriptedReply } from "../../src/engine";
import type { PendingApproval } from "../../src/engine/errors";
import { harness, workerFile } from "./helpers";

/**
 * A model chooses its tool calls' ids. None of them may decide which recorded step
 * a call is matched to: these ids tried each way an id could shape a journal key.
 */
const HOSTILE_IDS = ["c", "c~2", "c", "a/b", "x:y", "..", "", "z".repeat(4096), "w/turn:1/tool:c", "q/result", "r/approval"];

/** `note` (allowed) and `danger` (asks): each counts its effects by label and answers with its own label. */
function fxKind() {
  const effects = new Map<string, number>();
  const effect = (what: string) => (args: { label: string }) => {
    effects.set(args.label, (effects.get(args.label) ?? 0) + 1);
    return `${what} ${args.label}`;
  };
  const kind = defineToolset({
    kind: "fx",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      note: tool({ description: "Write a note", input: z.strictObject({ label: z.string() }), readOnly: true, run: effect("noted") }),
      danger: tool({ description: "Post something", input: z.strictObject({ label: z.string() }), run: effect("posted") }),
    },
  });
  return { kind, effects };
}

const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").map((m) => m.content);
const calls = (ids: string[], name: string, turn: number): ScriptedReply => ({
  toolCalls: ids.map((id, i) => ({ id, name, args: { label: `t${turn}-${i}` } })),
});

describe("model-chosen tool-call ids", () => {
  it("ids with '/', ':', '~N', '..', empty, 4 KiB, repeated in a turn and across turns, or named like keys: each call runs once with its own result; replay repeats nothing", async () => {
    const { kind, effects } = fxKind();
    const seen: string[][] = [];
    const script = (req: ModelRequest, n: number): ScriptedReply => {
      seen.push(toolResults(req));
      return n < 2 ? calls(HOSTILE_IDS, "note", n + 1) : { text: "done" };
    };
    const model = scriptedModel(script);
    const h = harness({ "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  fx: { use: fx }") }, { kinds: [kind], models: { "test:m": model } });
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "w", input: { input: "x" } }, store);
    expect(out).toMatchObject({ status: "succeeded", output: "done" });
    const labels = [1, 2].flatMap((turn) => HOSTILE_IDS.map((_id, i) => `t${turn}-${i}`));
    expect(Object.fromEntries(effects)).toEqual(Object.fromEntries(labels.map((l) => [l, 1])));
    // Each call's result is its own, in the order of the answer.
    expect(seen[2]!.slice(-HOSTILE_IDS.length)).toEqual(HOSTILE_IDS.map((_id, i) => `noted t2-${i}`));
    expect(seen[1]).toEqual(HOSTILE_IDS.map((_id, i) => `noted t1-${i}`));
    // No key carries an id: the 4 KiB one made no 4 KiB key.
    expect(Math.max(...[...store.entries.keys()].map((k) => k.length))).toBeLessThan(100);

    const again = scriptedModel(() => ({ text: "never asked" }));
    const replay = harness({ "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  fx: { use: fx }") }, { kinds: [kind], models: { "test:m": again } });
    expect(await replay.run({ worker: "w", input: { input: "x" } }, store)).toEqual(out);
    expect(again.requests).toBe(0);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });

  it("a root call named like a nested worker's gated call (the key it had) does not answer for it: the nested call still asks, its approver is notified, and it runs once after approval", async () => {
    const { kind, effects } = fxKind();
    // Under the old grammar `root/turn:1/tool:k/child/turn:1/tool:d` was the child's `danger` call.
    const root = scriptedModel([
      {
        toolCalls: [
          { id: "k", name: "child", args: { input: "go" } },
          { id: "k/child/turn:1/tool:d", name: "note", args: { label: "forged" } },
        ],
      },
      { text: "root done" },
    ]);
    const childSaw: string[][] = [];
    const child = scriptedModel((req, n) => {
      childSaw.push(toolResults(req));
      return n === 0 ? { toolCalls: [{ id: "d", name: "danger", args: { label: "post" } }] } : { text: "child done" };
    });
    const h = harness(
      {
        "root.worker": workerFile("name: root\nmodel: test:root\ntoolsets:\n  fx: { use: fx }\n  workers: [child]"),
        "child.worker": workerFile("name: child\ndescription: posts\nmodel: test:child\ntoolsets:\n  fx: { use: fx }\napproval:\n  notify: boss@example.com"),
      },
      { kinds: [kind], models: { "test:root": root, "test:child": child } },
    );
    const notified: PendingApproval[] = [];
    h.config.notifier = async (p) => notified.push(p);
    const store = new MemoryJournalStore();
    const req = { worker: "root", input: { input: "x" }, runId: "forge" };

    const first = await h.run(req, store);
    expect(first).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "danger", workerChain: ["root", "child"], args: { label: "post" } }] });
    expect(notified).toMatchObject([{ tool: "danger", notify: "boss@example.com" }]);
    expect(effects.get("post")).toBeUndefined();

    const [pending] = (first as { pending: PendingApproval[] }).pending;
    store.put(pending!.key, { approved: true, by: "boss" } satisfies ApprovalDecision);
    expect(await h.run(req, store)).toMatchObject({ status: "succeeded", output: "root done" });
    expect(Object.fromEntries(effects)).toEqual({ forged: 1, post: 1 });
    // The child read its own call's result, not the root's note.
    expect(childSaw.at(-1)).toEqual(["posted post"]);
    expect(notified).toHaveLength(1);
  });

  describe("ids ending in /budget never extend a budget", () => {
    // Each request costs $0.30: over max_cost_usd $0.50 after two. Every turn calls `danger` (it asks).
    const run = async (id: (n: number) => string, approvalMode: "approve_all" | "ask") => {
      const { kind, effects } = fxKind();
      const model = scriptedModel((_req, n) =>
        n < 6 ? { toolCalls: [{ id: id(n), name: "danger", args: { label: `p${n}` } }], usage: { inputTokens: 300_000, outputTokens: 0 } } : { text: "done" },
      );
      const h = harness(
        { "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  fx: { use: fx }") },
        { kinds: [kind], models: { "test:m": model }, prices: { "test:m": { input: 1, output: 0 } } },
      );
      const store = new MemoryJournalStore();
      const req = { worker: "w", input: { input: "x" }, runId: "budget-ids", approvalMode, budget: { maxCostUsd: 0.5, onExceed: "ask" as const } };
      let out = await h.run(req, store);
      // ask: a person approves each tool call (never the budget) as it comes.
      for (let i = 0; i < 10 && out.status === "awaiting_approval" && out.pending[0]!.tool === "danger"; i++) {
        store.put(out.pending[0]!.key, { approved: true, by: "person" } satisfies ApprovalDecision);
        out = await h.run(req, store);
      }
      return { out, requests: model.requests, effects: effects.size };
    };

    it("approval_mode approve_all: stops at the budget like the control run", async () => {
      const control = await run((n) => `call${n}`, "approve_all");
      expect(control.out).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
      const hostile = await run((n) => `call${n}/budget`, "approve_all");
      expect(hostile).toEqual(control);
      expect(hostile.requests).toBe(2);
    });

    it("approval_mode ask: approving calls whose ids end in /budget pauses at the budget like the control run", async () => {
      const control = await run((n) => `call${n}`, "ask");
      expect(control.out).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "continue_past_budget" }] });
      const hostile = await run((n) => `call${n}/budget`, "ask");
      expect(hostile).toEqual(control);
      expect(hostile.requests).toBe(2);
    });
  });
});
