import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, MemoryJournalStore, scriptedModel, tool, type ModelRequest } from "../../src/engine";
import { counterKind, harness, workerFile } from "./helpers";

const longInstructions = "Analyse the risks of the proposal. ".repeat(10).trim();

const catalogFiles = {
  "lead.worker": workerFile(`
name: lead
model: test:lead
toolsets:
  workers: [summarizer, "analysis-*"]`),
  "summarizer.worker": workerFile(`
name: summarizer
description: Summarize a text in one line`),
  "analysis-risk.worker": workerFile(
    `
name: analysis-risk
input:
  type: object
  properties: { proposal: { type: string }, depth: { type: integer, minimum: 1 } }
  required: [proposal]`,
    longInstructions,
  ),
  "analysis-cost.worker": workerFile(`
name: analysis-cost
description: Estimate the cost`),
  "other.worker": workerFile(`
name: other
description: Not listed by lead`),
};

describe("workers as tools", () => {
  it("offers exactly one tool per matching worker, with name, description and parameters, and no generic delegation tool", async () => {
    let offered: ModelRequest["tools"] = [];
    const lead = scriptedModel((req) => ((offered = req.tools), { text: "ok" }));
    const h = harness(catalogFiles, { models: { "test:lead": lead } });
    expect((await h.run({ worker: "lead", input: { input: "x" } })).status).toBe("succeeded");

    expect(offered.map((t) => t.name)).toEqual(["analysis-cost", "analysis-risk", "summarizer"]);
    const byName = Object.fromEntries(offered.map((t) => [t.name, t]));
    expect(byName.summarizer!.description).toBe("Summarize a text in one line");
    expect(byName["analysis-risk"]!.description).toBe(longInstructions.slice(0, 200));
    expect(byName["analysis-risk"]!.parameters).toEqual({
      type: "object",
      properties: { proposal: { type: "string" }, depth: { type: "integer", minimum: 1 } },
      required: ["proposal"],
    });
    expect(byName.summarizer!.parameters).toMatchObject({ properties: { input: { type: "string" } }, required: ["input"] });
  });

  it("runs the called worker with fresh history one level deeper and returns its output; bad arguments go back to the model", async () => {
    const requests: ModelRequest[] = [];
    const lead = scriptedModel([
      {
        toolCalls: [
          { name: "summarizer", args: { input: "the long text" } },
          { name: "analysis-risk", args: { depth: 0 } },
        ],
      },
      { text: "final" },
    ]);
    const child = scriptedModel((req) => (requests.push(req), { text: `summary of: ${req.messages.at(-1)!.content}` }));
    const h = harness(
      { ...catalogFiles, "summarizer.worker": catalogFiles["summarizer.worker"].replace("name: summarizer", "name: summarizer\nmodel: test:child") },
      { models: { "test:lead": lead, "test:child": child } },
    );
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "lead", input: { input: "x" } }, store);
    expect(out).toMatchObject({ status: "succeeded", output: "final" });
    // Fresh history: the child sees only its own system prompt and input.
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(store.entries.get("lead/turn:1/tool:1/result")).toMatchObject({ ok: true, value: "summary of: the long text" });
    expect(store.entries.get("lead/turn:1/tool:2/result")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/invalid arguments for analysis-risk: proposal: required; depth: 0 is less than 1$/),
    });
    expect(store.entries.has("lead/turn:1/tool:1/summarizer/turn:1/model")).toBe(true);
  });

  it("a self-recursive worker stops at MAX_DEPTH with the chain of workers in the error", async () => {
    const h = harness(
      {
        "echo.worker": workerFile(`
name: echo
toolsets:
  workers: [echo]`),
      },
      { maxDepth: 4 },
    );
    const out = await h.run({ worker: "echo", input: { input: "x" } });
    expect(out.status).toBe("succeeded");
    expect(JSON.stringify(out)).toContain("call depth 5 exceeds MAX_DEPTH 4: echo → echo → echo → echo → echo");
  });
});

describe("ToolContext", () => {
  const probeLog: Record<string, unknown> = {};
  const probe = defineToolset({
    kind: "probe",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      probe: tool({
        description: "Exercise the context",
        input: z.strictObject({}),
        readOnly: true,
        async run(_args, ctx) {
          probeLog.worker = await ctx.callTool("summarizer", { input: "via callTool" });
          probeLog.fn = await ctx.callTool("increment", {});
          probeLog.unknown = await ctx.callTool("nope", {}).catch((e: Error) => e.message);
          probeLog.ask = await ctx.llmAsk("what is 2+2?");
          probeLog.agent = await ctx.llmAgent({ instructions: "count once", input: "go", toolsets: { counter: { use: "counter" } } });
          probeLog.direct = await ctx.callWorker("summarizer", { input: "direct" });
          probeLog.depth = ctx.depth;
          probeLog.chain = ctx.workerChain;
          probeLog.step = await ctx.step("once", () => "memoized");
          return "probed";
        },
      }),
    },
  });

  it("callTool reaches a worker and a function tool by name; llmAsk, llmAgent and callWorker work inside a function tool", async () => {
    const { kind: counter } = counterKind();
    const lead = scriptedModel((req, n) => {
      if (!req.tools.length && req.messages.at(-1)!.content === "what is 2+2?") return { text: "4" };
      if (req.messages[0]!.content === "count once") {
        return req.messages.some((m) => m.role === "tool") ? { text: "agent counted" } : { toolCalls: [{ name: "increment", args: {} }] };
      }
      return n === 0 ? { toolCalls: [{ name: "probe", args: {} }] } : { text: "lead done" };
    });
    const h = harness(
      {
        "lead.worker": workerFile(`
name: lead
model: test:lead
toolsets:
  probe: { use: probe }
  counter: { use: counter }
  workers: [summarizer]`),
        "summarizer.worker": workerFile(`
name: summarizer
model: test:tools
description: Summarize`),
      },
      { kinds: [probe, counter], models: { "test:lead": lead } },
    );
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "lead", input: { input: "x" } }, store);
    expect(out).toMatchObject({ status: "succeeded", output: "lead done" });
    expect(probeLog).toEqual({
      worker: "done: via callTool",
      fn: 1,
      unknown: 'unknown tool "nope"; available: probe, increment, summarizer',
      ask: "4",
      agent: "agent counted",
      direct: "done: direct",
      depth: 1,
      chain: ["lead"],
      step: "memoized",
    });
    const tool = "lead/turn:1/tool:1";
    expect([...store.entries.keys()].filter((k) => k.startsWith(`${tool}/`)).sort()).toEqual(
      [
        `${tool}/call:1/result`,
        `${tool}/call:1/summarizer/turn:1/model`,
        `${tool}/call:2/result`,
        `${tool}/call:3/result`, // the unknown name: its error is recorded too
        `${tool}/ask:4`,
        `${tool}/agent:5/result`,
        `${tool}/agent:5/turn:1/model`,
        `${tool}/agent:5/turn:1/tool:1/result`,
        `${tool}/agent:5/turn:2/model`,
        `${tool}/worker:6/result`,
        `${tool}/worker:6/summarizer/turn:1/model`,
        `${tool}/step:once`,
        `${tool}/result`,
      ].sort(),
    );
  });

  it("the usage of a 3-level nested run adds up exactly at the root, with cost from the price table", async () => {
    const usage = (i: number, o: number) => ({ inputTokens: i, outputTokens: o });
    const top = scriptedModel([
      { toolCalls: [{ name: "mid", args: { input: "a" } }], usage: usage(100, 10) },
      { text: "top", usage: usage(200, 20) },
    ]);
    const mid = scriptedModel([
      { toolCalls: [{ name: "leaf", args: { input: "b" } }], usage: usage(30, 3) },
      { text: "mid", usage: usage(40, 4) },
    ]);
    const leaf = scriptedModel([{ text: "leaf", usage: usage(7, 1) }]);
    const h = harness(
      {
        "top.worker": workerFile(`name: top\nmodel: test:top\ntoolsets:\n  workers: [mid]`),
        "mid.worker": workerFile(`name: mid\nmodel: test:mid\ntoolsets:\n  workers: [leaf]`),
        "leaf.worker": workerFile(`name: leaf\nmodel: test:leaf`),
      },
      {
        models: { "test:top": top, "test:mid": mid, "test:leaf": leaf },
        prices: { "test:top": { input: 1, output: 2 }, "test:mid": { input: 3, output: 4 }, "test:leaf": { input: 5, output: 6 } },
      },
    );
    const out = await h.run({ worker: "top", input: { input: "go" } });
    expect(out.status).toBe("succeeded");
    const cost = (300 * 1 + 30 * 2 + 70 * 3 + 7 * 4 + 7 * 5 + 1 * 6) / 1e6;
    expect(out.usage).toEqual({ requests: 5, inputTokens: 377, outputTokens: 38, costUsd: cost });

    // Replaying the finished journal re-adds the same usage without any model request.
    const store = new MemoryJournalStore();
    const h2 = harness(
      {
        "top.worker": workerFile(`name: top\nmodel: test:top\ntoolsets:\n  workers: [mid]`),
        "mid.worker": workerFile(`name: mid\nmodel: test:mid\ntoolsets:\n  workers: [leaf]`),
        "leaf.worker": workerFile(`name: leaf\nmodel: test:leaf`),
      },
      {
        models: {
          "test:top": scriptedModel([
            { toolCalls: [{ name: "mid", args: { input: "a" } }], usage: usage(100, 10) },
            { text: "top", usage: usage(200, 20) },
          ]),
          "test:mid": scriptedModel([
            { toolCalls: [{ name: "leaf", args: { input: "b" } }], usage: usage(30, 3) },
            { text: "mid", usage: usage(40, 4) },
          ]),
          "test:leaf": scriptedModel([{ text: "leaf", usage: usage(7, 1) }]),
        },
      },
    );
    const first = await h2.run({ worker: "top", input: { input: "go" } }, store);
    const again = await h2.run({ worker: "top", input: { input: "go" } }, store);
    expect(again).toEqual(first);
  });
});
