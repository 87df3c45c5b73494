import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ApprovalRequired,
  defineFunction,
  defineToolset,
  executeRun,
  MemoryJournalStore,
  RunError,
  RunInterrupted,
  scriptedModel,
  StorageError,
  tool,
  type PendingApproval,
  type ToolContext,
} from "../../src/engine";
import { boundContext, SignalBoundary } from "../../src/engine/run/signal-boundary";
import { harness, workerFile } from "./helpers";

const pending = (tool: string): PendingApproval => ({ key: `k/${tool}`, id: tool, callPath: "p", workerChain: [], tool, args: {}, description: tool });
const tick = () => new Promise((r) => setTimeout(r, 1));

describe("SignalBoundary: user code never observes an engine signal", () => {
  it("a call that meets a signal stays pending for the body (its catch never runs); the boundary rejects with the signal", async () => {
    const b = new SignalBoundary();
    const seen: string[] = [];
    const done = b.run(async () => {
      try {
        await b.call(() => Promise.reject(new ApprovalRequired([pending("post")])));
        seen.push("went on");
      } catch {
        seen.push("caught");
      }
    });
    await expect(done).rejects.toBeInstanceOf(ApprovalRequired);
    await tick();
    expect(seen).toEqual([]);
  });

  it("parallel calls: pauses are merged, and the boundary waits for a call still in flight before it rejects", async () => {
    const b = new SignalBoundary();
    const log: string[] = [];
    const step = () => tick().then(() => void log.push("step written"));
    const done = b.run(() =>
      Promise.all([
        b.call(() => Promise.reject(new ApprovalRequired([pending("a")]))),
        b.call(step),
        b.call(() => Promise.reject(new ApprovalRequired([pending("b")]))),
      ]),
    );
    const err = await done.catch((e: unknown) => (log.push("rejected"), e));
    expect((err as ApprovalRequired).pending.map((p) => p.tool)).toEqual(["a", "b"]);
    expect(log).toEqual(["step written", "rejected"]);
  });

  it("a fatal error, an interruption or a storage failure wins over pauses", async () => {
    const b = new SignalBoundary();
    const fatal = new RunError("budget_exceeded", "over", true);
    const done = b.run(() => Promise.all([b.call(() => Promise.reject(new ApprovalRequired([pending("a")]))), b.call(() => Promise.reject(fatal))]));
    await expect(done).rejects.toBe(fatal);
  });

  it("after a signal a new call acts on nothing, and what the body returns is ignored", async () => {
    const b = new SignalBoundary();
    let acted = 0;
    const done = b.run(async () => {
      void b.call(() => Promise.reject(new RunInterrupted("dispatched"))).catch(() => "caught");
      await tick();
      void b.call(async () => void acted++);
      return "the body's own result";
    });
    await expect(done).rejects.toBeInstanceOf(RunInterrupted);
    expect(acted).toBe(0);
  });

  it("a bound ctx's state store is guarded too: a write the journal's store refuses (StorageError) is no error the code can catch", async () => {
    const b = new SignalBoundary();
    const refusing = { get: async () => undefined, put: () => Promise.reject(new StorageError("disk full")), delete: async () => false, list: async () => [] };
    const ctx = boundContext({ state: refusing } as unknown as ToolContext, b);
    let caught = false;
    const done = b.run(async () => {
      try {
        await ctx.state.put("k", 1);
      } catch {
        caught = true;
      }
    });
    await expect(done).rejects.toBeInstanceOf(StorageError);
    expect(caught).toBe(false);
  });

  it("a body that returns while a call is in flight settles when that call does: with its own result, or with the signal the call met", async () => {
    const b = new SignalBoundary();
    const log: string[] = [];
    const returned = b.run(async () => {
      void b.call(() => tick().then(() => void log.push("call done")));
      return "result";
    });
    expect(await returned.then((r) => (log.push("settled"), r))).toBe("result");
    expect(log).toEqual(["call done", "settled"]);

    const c = new SignalBoundary();
    const paused = c.run(async () => {
      void c.call(() => tick().then(() => Promise.reject(new ApprovalRequired([pending("late")]))));
      return "result";
    });
    await expect(paused).rejects.toBeInstanceOf(ApprovalRequired);
  });

  it("without a signal: a real failure reaches the body, and the body's result or error is the boundary's", async () => {
    const b = new SignalBoundary();
    expect(await b.run(async () => b.call(() => Promise.reject(new Error("boom"))).catch((e: Error) => `handled ${e.message}`))).toBe("handled boom");
    await expect(new SignalBoundary().run(() => Promise.reject(new Error("own")))).rejects.toThrow("own");
  });
});

/** A model that hands its first request off (as queue mode does: the activation ends), then answers. */
const handingOff = () => {
  let asked = 0;
  return scriptedModel(() => {
    if (asked++ === 0) throw new RunInterrupted("dispatched");
    return { text: "the summary" };
  });
};

describe("code that catches around ctx calls (issue 19)", () => {
  it("a kind's tool that catches around ctx.llmAsk: a handed-off request runs no fallback; resumed, the tool returns the answer", async () => {
    let fallbacks = 0;
    const careful = defineToolset({
      kind: "careful",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        summarise: tool({
          description: "Summarises, with a fallback",
          input: z.strictObject({}),
          readOnly: true,
          run: async (_args, ctx) => {
            try {
              return await ctx.llmAsk("summarise", { model: "test:handoff" });
            } catch {
              fallbacks++;
              return "fallback";
            }
          },
        }),
      },
    });
    // Also one boundary inside another: a function that catches around the tool.
    const fn = defineFunction({
      name: "outer",
      description: "Calls the careful tool, with its own fallback",
      input: z.strictObject({}),
      toolsets: { careful: { use: "careful" } },
      async run(_input, ctx) {
        try {
          return await ctx.callTool("summarise", {});
        } catch {
          fallbacks++;
          return "outer fallback";
        }
      },
    });
    const h = harness({}, { kinds: [careful], functions: [fn], models: { "test:handoff": handingOff() } });
    const store = new MemoryJournalStore();
    const req = { runId: "careful-1", worker: "outer", input: {} };
    await expect(executeRun(h.config, store, req)).rejects.toBeInstanceOf(RunInterrupted);
    expect(fallbacks).toBe(0);
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded", output: "the summary" });
    expect(fallbacks).toBe(0);
  });

  it("a worker's tool call of such a kind records the answer, not the fallback", async () => {
    let fallbacks = 0;
    const careful = defineToolset({
      kind: "careful",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        summarise: tool({
          description: "Summarises, with a fallback",
          input: z.strictObject({}),
          readOnly: true,
          run: (_args, ctx) => ctx.llmAsk("summarise", { model: "test:handoff" }).catch(() => (fallbacks++, "fallback")),
        }),
      },
    });
    const worker = scriptedModel((req) => (req.messages.some((m) => m.role === "tool") ? { text: "done" } : { toolCalls: [{ id: "s", name: "summarise" }] }));
    const h = harness(
      { "w.worker": workerFile("name: w\nmodel: test:worker\ntoolsets:\n  careful: { use: careful }") },
      { kinds: [careful], models: { "test:worker": worker, "test:handoff": handingOff() } },
    );
    const store = new MemoryJournalStore();
    const req = { runId: "careful-2", worker: "w", input: { input: "go" } };
    await expect(executeRun(h.config, store, req)).rejects.toBeInstanceOf(RunInterrupted);
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded", output: "done" });
    expect(store.entries.get("w/turn:1/tool:1/result")).toMatchObject({ ok: true, value: "the summary" });
    expect(fallbacks).toBe(0);
  });

  it("a function whose calls change order on replay fails as nondeterministic instead of getting another call's result", async () => {
    let first = "look_up";
    const probe = defineToolset({
      kind: "probe",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        look_up: tool({ description: "Reads", input: z.strictObject({}), readOnly: true, run: () => "looked up" }),
        summarizer: tool({ description: "Reads too", input: z.strictObject({}), readOnly: true, run: () => "summarised" }),
        post: tool({ description: "Writes (asks)", input: z.strictObject({}), run: () => "posted" }),
      },
    });
    const fn = defineFunction({
      name: "drifting",
      description: "Calls a tool chosen outside ctx (not replayable), then one that asks",
      input: z.strictObject({}),
      toolsets: { probe: { use: "probe" } },
      async run(_input, ctx) {
        const got = await ctx.callTool(first, {});
        await ctx.callTool("post", {});
        return got;
      },
    });
    const h = harness({}, { kinds: [probe], functions: [fn] });
    const store = new MemoryJournalStore();
    const req = { runId: "drift-1", worker: "drifting", input: {} };
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "awaiting_approval" });
    first = "summarizer";
    const replayed = await executeRun(h.config, store, req);
    expect(replayed).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
    expect((replayed as { error: { message: string } }).error.message).toMatch(
      /recorded for a call of look_up .*now asked for a call of summarizer .*same ctx calls/,
    );
  });
});
