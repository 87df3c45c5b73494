import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineFunction, executeRun, MemoryJournalStore, type RunOutcome } from "../../src/engine";
import { callTree } from "../../src/engine/journal/call-tree";
import { journalUsage, rolledUpUsage } from "../../src/engine/journal/run-usage";
import { childEndKey, keyWriter, parseKey } from "../../src/engine/journal/keys";
import { childRunIdFor, MAX_MAP_CONCURRENCY } from "../../src/engine/run/spawn-step";
import type { ChildEnd, ChildSpec, Children } from "../../src/engine/types/children";
import { harness, workerFile } from "./helpers";

/** A children port that counts its starts and answers as run objects would (the same id twice: the same child). */
function countingChildren() {
  const started = new Map<string, { key: string; spec: ChildSpec }>();
  const calls: string[] = [];
  const port: Children = {
    async start(id, key, spec) {
      calls.push(id);
      if (spec.worker === "missing") return { ok: false, error: 'unknown worker "missing"' };
      if (!started.has(id)) started.set(id, { key, spec });
      return { ok: true, id };
    },
  };
  return { port, started, calls };
}

const child = defineFunction({
  name: "child",
  description: "Doubles n",
  input: z.strictObject({ n: z.number() }),
  run: ({ n }) => ({ doubled: n * 2 }),
});

const fanOut = defineFunction({
  name: "fan-out",
  description: "Maps child over its inputs",
  input: z.strictObject({ ns: z.array(z.number()), concurrency: z.number().optional() }),
  async run({ ns, concurrency }, ctx) {
    return ctx.map(
      "child",
      ns.map((n) => ({ n })),
      { concurrency },
    );
  },
});

const spawner = defineFunction({
  name: "spawner",
  description: "Spawns one child and reports how it went",
  input: z.strictObject({ worker: z.string() }),
  async run({ worker }, ctx) {
    try {
      const h = await ctx.spawn(worker, { n: 1 });
      return { id: h.id, result: await h.result() };
    } catch (err) {
      return { error: (err as Error).message };
    }
  },
});

/** Records the host's end of the child started under `spawn`, as the run object does when the child tells it. */
function endChild(store: MemoryJournalStore, spawn: string, id: string, end: Partial<ChildEnd>) {
  store.put(childEndKey(spawn), { ended: "child", at: 1, run: id, status: "succeeded", ...end });
}

describe("ctx.spawn and ctx.map (child runs)", () => {
  it("a child's end key is the host's to write, under its spawn", () => {
    expect(parseKey("w/turn:1/tool:1/spawn:3/end")).toEqual({ kind: "child_end", spawn: "w/turn:1/tool:1/spawn:3" });
    expect(keyWriter("w/turn:1/tool:1/spawn:3/end")).toBe("host");
    expect(parseKey("w/turn:1/tool:1/call:3/end")).toEqual({ kind: "other" });
    expect(keyWriter("w/spawn:1")).toBe("engine");
  });

  it("map starts each child once, at most `concurrency` waiting at once, and joins their outputs in input order across replays", async () => {
    const h = harness({}, { functions: [child, fanOut] });
    const { port, started, calls } = countingChildren();
    h.config.children = port;
    const store = new MemoryJournalStore();
    const input = { ns: [1, 2, 3, 4, 5], concurrency: 2 };
    const run = () => executeRun(h.config, store, { runId: "parent-1", worker: "fan-out", input });
    let outcome: RunOutcome = await run();
    const ended = new Set<string>();
    // Children end in reverse order of their start, two at a time: the parent replays after each pair.
    for (let round = 0; outcome.status === "waiting" && round < 10; round++) {
      expect(outcome.waits.length).toBeLessThanOrEqual(2);
      expect(outcome.waits.every((w) => w.kind === "child")).toBe(true);
      for (const w of [...outcome.waits].reverse()) {
        const spawn = parseKey(w.key);
        if (spawn.kind !== "child_end") throw new Error(`not a child's end: ${w.key}`);
        const { spec } = started.get(w.correlation!)!;
        endChild(store, spawn.spawn, w.correlation!, { output: { doubled: (spec.input as { n: number }).n * 2 } });
        ended.add(w.correlation!);
      }
      outcome = await run();
    }
    expect(outcome).toMatchObject({ status: "succeeded", output: [1, 2, 3, 4, 5].map((n) => ({ doubled: n * 2 })) });
    expect(started.size).toBe(5);
    expect(calls).toHaveLength(5); // never asked again for a recorded spawn
    expect(ended.size).toBe(5);
    // Each child's id derives from the parent and its spawn's key; each got its input.
    for (const [id, { key, spec }] of started) {
      expect(id).toBe(childRunIdFor("parent-1", key));
      expect(spec).toMatchObject({ worker: "child", depth: 1 });
    }
  });

  it("a start whose step was not recorded (the parent evicted after it) asks for the same child again", async () => {
    const h = harness({}, { functions: [child, spawner] });
    const { port, started, calls } = countingChildren();
    h.config.children = port;
    const first = await executeRun(h.config, new MemoryJournalStore(), { runId: "parent-2", worker: "spawner", input: { worker: "child" } });
    expect(first.status).toBe("waiting");
    // A fresh journal: nothing of the first activation was recorded.
    const again = await executeRun(h.config, new MemoryJournalStore(), { runId: "parent-2", worker: "spawner", input: { worker: "child" } });
    expect(again.status).toBe("waiting");
    expect(calls).toHaveLength(2);
    expect(new Set(calls).size).toBe(1);
    expect(started.size).toBe(1);
  });

  it("a child that failed or was cancelled is the parent's error, naming the child; a refused start is one too", async () => {
    const h = harness({}, { functions: [child, spawner] });
    const { port } = countingChildren();
    h.config.children = port;
    for (const [end, message] of [
      [{ status: "failed", error: { code: "tool", message: "boom" } }, /^the child run child-[0-9a-f]{40} of child failed: boom$/],
      [{ status: "cancelled" }, /^the child run child-[0-9a-f]{40} of child was cancelled$/],
    ] as const) {
      const store = new MemoryJournalStore();
      const paused = await executeRun(h.config, store, { runId: `parent-${end.status}`, worker: "spawner", input: { worker: "child" } });
      if (paused.status !== "waiting") throw new Error(paused.status);
      const w = paused.waits[0]!;
      endChild(store, (parseKey(w.key) as { spawn: string }).spawn, w.correlation!, end);
      const outcome = await executeRun(h.config, store, { runId: `parent-${end.status}`, worker: "spawner", input: { worker: "child" } });
      expect((outcome as { output: { error: string } }).output.error).toMatch(message);
    }
    const refused = await h.run({ worker: "spawner", input: { worker: "missing" } });
    expect(refused).toMatchObject({ output: { error: 'starting a child run of missing: unknown worker "missing"' } });
  });

  it("hostile: a bad worker name, a concurrency out of bounds and too many inputs are refused before anything starts", async () => {
    const h = harness({}, { functions: [child, spawner, fanOut] });
    const { port, calls } = countingChildren();
    h.config.children = port;
    const badName = await h.run({ worker: "spawner", input: { worker: "../x".repeat(30) } });
    expect(badName).toMatchObject({ output: { error: "ctx.spawn: a worker's name is 1-64 characters of A-Z a-z 0-9 _ -" } });
    for (const concurrency of [0, MAX_MAP_CONCURRENCY + 1, 1.5]) {
      const out = await h.run({ worker: "fan-out", input: { ns: [1], concurrency } });
      expect(out).toMatchObject({ status: "failed" });
      expect(JSON.stringify(out)).toContain(`concurrency is a whole number from 1 to ${MAX_MAP_CONCURRENCY}`);
    }
    const tooMany = await h.run({ worker: "fan-out", input: { ns: Array.from({ length: 1001 }, (_, i) => i) } });
    expect(JSON.stringify(tooMany)).toContain("1001 inputs; a run may start at most 1000 child runs");
    expect(calls).toHaveLength(0);
  });

  it("without a host that starts children, a spawn is refused with a reason", async () => {
    const h = harness({}, { functions: [child, spawner] });
    expect(await h.run({ worker: "spawner", input: { worker: "child" } })).toMatchObject({
      output: { error: "starting a child run of child: this host starts no child runs" },
    });
  });

  it("toolsets.workers takes {names, run: child}; anything else there is refused naming the field", () => {
    const h = harness({ "lead.worker": workerFile("name: lead\ntoolsets:\n  workers: { names: [child], run: child }") }, { functions: [child] });
    expect(h.config.catalog.get("lead")).toMatchObject({ workers: ["child"], workersRun: "child", workerTools: ["child"] });
    const plain = harness({ "lead.worker": workerFile("name: lead\ntoolsets:\n  workers: { names: [child] }") }, { functions: [child] });
    expect(plain.config.catalog.get("lead")?.workersRun).toBeUndefined();
    for (const bad of ["{ names: [child], run: elsewhere }", "{ names: [child], extra: 1 }", "{ run: child }"])
      expect(() => harness({ "lead.worker": workerFile(`name: lead\ntoolsets:\n  workers: ${bad}`) }, { functions: [child] })).toThrow(
        /toolsets\.workers: must be a list of worker names or globs, or \{names: \[\.\.\.\], run: child \| inline\}/,
      );
  });

  it("depth counts across runs: a child started at depth d gets MAX_DEPTH - d levels; its spawn tells the host the spawning call's depth", async () => {
    const caller = defineFunction({
      name: "caller",
      description: "Calls child one level down",
      input: z.strictObject({}),
      run: async (_input, ctx) => ctx.callWorker("child", { n: 1 }),
    });
    const h = harness({}, { functions: [child, caller], maxDepth: 3 });
    expect(await executeRun(h.config, new MemoryJournalStore(), { runId: "d-1", worker: "caller", input: {}, parentDepth: 1 })).toMatchObject({
      status: "succeeded",
    });
    const deep = await executeRun(h.config, new MemoryJournalStore(), { runId: "d-2", worker: "caller", input: {}, parentDepth: 2 });
    expect(deep).toMatchObject({ status: "failed" });
    expect(JSON.stringify(deep)).toContain("call depth 2 exceeds MAX_DEPTH 1: caller → child");
    const { port, started } = countingChildren();
    const spawnerH = harness({}, { functions: [child, spawner] });
    spawnerH.config.children = port;
    await spawnerH.run({ worker: "spawner", input: { worker: "child" } });
    expect([...started.values()].at(-1)!.spec.depth).toBe(1);
  });

  it("budgets (issue 32): each child starts with what the run has left, its ended children's usage counted once per replay; a run with nothing left starts none", async () => {
    const inTurn = defineFunction({
      name: "in-turn",
      description: "Spawns child after child, each once the last ended",
      input: z.strictObject({ count: z.number() }),
      async run({ count }, ctx) {
        for (let n = 0; n < count; n++) await (await ctx.spawn("child", { n })).result();
        return { count };
      },
    });
    const h = harness({}, { functions: [child, inTurn] });
    const { port, started } = countingChildren();
    h.config.children = port;
    const store = new MemoryJournalStore();
    const used = { requests: 2, inputTokens: 300, outputTokens: 100, costUsd: 0.25 };
    const run = () =>
      executeRun(h.config, store, { runId: "b-1", worker: "in-turn", input: { count: 3 }, budget: { maxTokens: 1000, maxCostUsd: 1, onExceed: "fail" } });
    let outcome = await run();
    for (let round = 0; outcome.status === "waiting" && round < 5; round++) {
      const w = outcome.waits[0]!;
      endChild(store, (parseKey(w.key) as { spawn: string }).spawn, w.correlation!, { output: {}, usage: used });
      outcome = await run();
    }
    // Each child reports 400 tokens and $0.25: the n-th spawn gets 1000 tokens and $1 less what the n - 1 before it used.
    expect([...started.values()].map((s) => s.spec.budget)).toEqual([
      { maxTokens: 1000, maxCostUsd: 1, onExceed: "fail" },
      { maxTokens: 600, maxCostUsd: 0.75, onExceed: "fail" },
      { maxTokens: 200, maxCostUsd: 0.5, onExceed: "fail" },
    ]);
    // The third child's 400 tokens put the run past its budget after its last spawn: it ends with all three counted, once.
    expect(outcome).toMatchObject({ status: "succeeded", usage: { requests: 6, inputTokens: 900, outputTokens: 300, costUsd: 0.75 } });
    expect(await run()).toMatchObject({ status: "succeeded", usage: { requests: 6, inputTokens: 900, outputTokens: 300 } });

    // Over its budget, a run spawns nothing more: the check before a start is the one before a model request.
    const over = new MemoryJournalStore();
    const again = () => executeRun(h.config, over, { runId: "b-2", worker: "in-turn", input: { count: 3 }, budget: { maxTokens: 700 } });
    let o = await again();
    for (let round = 0; o.status === "waiting" && round < 5; round++) {
      const w = o.waits[0]!;
      endChild(over, (parseKey(w.key) as { spawn: string }).spawn, w.correlation!, { output: {}, usage: used });
      o = await again();
    }
    expect(o).toMatchObject({ status: "failed", error: { code: "budget_exceeded", message: expect.stringContaining("800 tokens used, max_tokens is 700") } });
    expect([...over.entries.keys()].filter((k) => /\/spawn:\d+$/.test(k))).toHaveLength(2);
  });

  it("a child run's usage is its spawning worker call's in the call tree, so the tree's top adds up to the run's usage", () => {
    const answer = (toolCalls: unknown[], inputTokens: number) => ({
      text: null,
      toolCalls,
      usage: { inputTokens, outputTokens: 5 },
      model: "m",
      costUsd: 0.5,
    });
    const entries: Array<[string, unknown]> = [
      ["boss/turn:1/model", answer([{ id: "a", name: "helper", arguments: "{}" }], 100)],
      ["boss/turn:1/tool:1/spawn:1", { ok: true, id: "child-1", worker: "helper" }],
      [
        childEndKey("boss/turn:1/tool:1/spawn:1"),
        { ended: "child", at: 1, run: "child-1", status: "succeeded", output: 1, usage: { requests: 3, inputTokens: 70, outputTokens: 30, costUsd: 0.25 } },
      ],
      ["boss/turn:2/model", answer([], 200)],
    ];
    const tree = callTree(entries)!;
    expect(tree.usage).toEqual({ requests: 5, inputTokens: 370, outputTokens: 40, costUsd: 1.25 });
    expect(rolledUpUsage(tree)).toEqual(journalUsage(entries));
  });
});
