// Review of issue 28 (replay order, fingerprints, ctx inside ctx.step): black-box cases
// that the change gets wrong. Each test states what should happen; it fails on the
// reviewed main.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineFunction, executeRun, MemoryJournalStore, type Model, type ModelRequest } from "../../src/engine";
import { approvedArgsOf } from "../../src/engine/journal/fingerprint";
import { counterKind, harness, poster, workerFile } from "./helpers";
import { defineToolset, RunInterrupted, tool } from "../../src/engine";

/** A model that answers each prompt with its own text, after `delays[prompt]` ms, spending `tokens[prompt]` input tokens. */
function model(delays: Record<string, number>, tokens: Record<string, number>): Model & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async request(req: ModelRequest) {
      const prompt = String(req.messages.at(-1)!.content);
      asked.push(prompt);
      const ms = delays[prompt] ?? 0;
      if (ms) await new Promise((r) => setTimeout(r, ms));
      return { text: `answer to ${prompt}`, toolCalls: [], usage: { inputTokens: tokens[prompt] ?? 0, outputTokens: 0 } };
    },
  };
}

type Paused = { status: string; pending: Array<{ key: string; args: unknown; tool: string }> };

/** A person's decision as the run's object records it: bound to the arguments stored with the pending approval. */
const decide = (store: MemoryJournalStore, p: { key: string; args: unknown }, approved: boolean) =>
  store.put(p.key, { approved, by: "boss", args_hash: approvedArgsOf(p.args) });

describe("budget approvals are not bound to the usage figures they show (a replay may count them in another order)", () => {
  // B is slow and spends 10 tokens; C is fast and spends 10; A is asked after C's answer.
  const fn = defineFunction({
    name: "spender",
    description: "Two parallel branches of model calls under a token budget",
    input: z.strictObject({}),
    async run(_input, ctx) {
      return Promise.all([
        ctx.llmAsk("B", { model: "test:m" }),
        (async () => {
          await ctx.llmAsk("C", { model: "test:m" });
          return ctx.llmAsk("A", { model: "test:m" });
        })(),
      ]);
    },
  });

  it("a person approves going past the budget; the replay reaches the same approval and continues (it failed nondeterministic)", async () => {
    const m = model({ B: 30 }, { A: 1, B: 10, C: 10 });
    const h = harness({}, { functions: [fn], models: { "test:m": m } });
    const store = new MemoryJournalStore();
    const req = { runId: "budget-par", worker: "spender", input: {}, budget: { maxTokens: 10, onExceed: "ask" as const } };

    const first = (await executeRun(h.config, store, req)) as unknown as Paused;
    expect(first.status).toBe("awaiting_approval");
    const [p] = first.pending;
    // Asked when C had answered and B had not: 10 tokens used.
    expect(p).toMatchObject({ key: "spender/ask:3/budget/approval", tool: "continue_past_budget", args: { used_tokens: 10 } });
    decide(store, p!, true);

    // The code is deterministic and the person said "continue". On replay B's recorded usage is
    // counted at once (before C's answer is handed back), so the check at A sees 20 tokens, asks
    // "the same" approval with other arguments, and the bound decision refuses it.
    const second = await executeRun(h.config, store, req);
    expect(second).toMatchObject({ status: "succeeded", output: ["answer to B", "answer to A"] });
  });
});

describe("budget approvals in plain worker files (no code of the user's)", () => {
  it("two sub-workers in one turn: the approval a person gave holds on replay (it was refused as nondeterministic)", async () => {
    const { kind } = counterKind();
    const reply = (r: { text?: string; calls?: string[]; tokens: number; ms?: number }): Model => ({
      async request(req) {
        if (r.ms) await new Promise((ok) => setTimeout(ok, r.ms));
        const called = req.messages.some((m) => m.role === "tool");
        const calls = !called && r.calls ? r.calls.map((name, i) => ({ id: `c${i}`, name, arguments: name === "increment" ? "{}" : '{"input":"go"}' })) : [];
        return {
          text: calls.length ? null : (r.text ?? "done"),
          toolCalls: calls,
          usage: { inputTokens: calls.length || !r.calls ? r.tokens : 1, outputTokens: 0 },
        };
      },
    });
    const h = harness(
      {
        "boss.worker": workerFile("name: boss\nmodel: test:boss\ntoolsets:\n  workers: [slow, busy]"),
        "slow.worker": workerFile("name: slow\nmodel: test:slow"),
        "busy.worker": workerFile("name: busy\nmodel: test:busy\ntoolsets:\n  counter: { use: counter }"),
      },
      {
        kinds: [kind],
        models: {
          "test:boss": reply({ calls: ["slow", "busy"], tokens: 0 }),
          "test:slow": reply({ text: "slow done", tokens: 10, ms: 30 }),
          "test:busy": reply({ calls: ["increment"], tokens: 10 }),
        },
      },
    );
    const store = new MemoryJournalStore();
    const req = { runId: "budget-loop", worker: "boss", input: { input: "go" }, budget: { maxTokens: 10, onExceed: "ask" as const } };
    const first = (await executeRun(h.config, store, req)) as unknown as Paused;
    expect(first.pending).toMatchObject([{ key: "boss/turn:1/tool:2/busy/turn:2/model/budget/approval", args: { used_tokens: 10 } }]);
    decide(store, first.pending[0]!, true);
    // Approved, busy's second turn runs; the boss's next request is over the extended budget (20 tokens) and asks anew.
    expect(await executeRun(h.config, store, req)).toMatchObject({
      status: "awaiting_approval",
      pending: [{ key: "boss/turn:2/model/budget/approval", args: { max_tokens: 20 } }],
    });
  });
});

describe("Promise.race against a wait is decided by whichever comes first", () => {
  it("a model answer raced against a timeout: the answer wins at once (the run slept until the timeout)", async () => {
    const fn = defineFunction({
      name: "timeout-race",
      description: "Asks the model, with a one-hour timeout",
      input: z.strictObject({}),
      run: async (_input, ctx) => Promise.race([ctx.llmAsk("quick", { model: "test:m" }), ctx.sleep("1h").then(() => "timed out")]),
    });
    const h = harness({}, { functions: [fn], models: { "test:m": model({}, {}) } });
    const out = await executeRun(h.config, new MemoryJournalStore(), { runId: "race-1", worker: "timeout-race", input: {} });
    // The race was won by the answer; the run instead waits for the hour (status "waiting").
    expect(out).toMatchObject({ status: "succeeded", output: "answer to quick" });
  });

  it("an event wait raced against a shorter sleep: once the sleep has ended the race is decided (the run waited on for the event)", async () => {
    const fn = defineFunction({
      name: "event-or-reminder",
      description: "Waits for an event for a week, or an hour, whichever first",
      input: z.strictObject({}),
      run: async (_input, ctx) =>
        Promise.race([ctx.waitForEvent("approved", { timeout: "7d" }).then(() => "event"), ctx.sleep("1h").then(() => "an hour passed")]),
    });
    const h = harness({}, { functions: [fn] });
    const store = new MemoryJournalStore();
    const req = { runId: "race-2", worker: "event-or-reminder", input: {} };
    const first = (await executeRun(h.config, store, req)) as unknown as { status: string; waits: Array<{ key: string; kind: string }> };
    expect(first.status).toBe("waiting");
    const sleep = first.waits.find((w) => w.kind === "sleep")!;
    // The hour passes: the run's object records the sleep's end (as RunWaits.end does) and replays.
    store.put(sleep.key, { ended: "time", at: Date.now(), wait: "sleep" });
    const second = await executeRun(h.config, store, req);
    expect(second).toMatchObject({ status: "succeeded", output: "an hour passed" });
  });
});

describe("a failed ctx.step is recorded, and replays in its turn beside a recorded result", () => {
  it("after a replay each branch still gets the id it got the first time (they were silently swapped)", async () => {
    const seen: Array<{ a: string; b: string }> = [];
    const fn = defineFunction({
      name: "fallback",
      description: "A flaky fetch with a fallback, beside a model call; then a sleep",
      input: z.strictObject({}),
      async run(_input, ctx) {
        const [a, b] = await Promise.all([
          (async () => {
            try {
              // A fetch that fails after 20 ms, every time (its error is recorded: the step does not run again).
              await ctx.step("fetch", async () => {
                await new Promise((r) => setTimeout(r, 20));
                throw new Error("upstream answered 503");
              });
              return "fetched";
            } catch {
              return `A:${await ctx.randomId()}`;
            }
          })(),
          (async () => {
            await ctx.llmAsk("B", { model: "test:m" });
            return `B:${await ctx.randomId()}`;
          })(),
        ]);
        seen.push({ a, b });
        await ctx.sleep("1m");
        return { a, b };
      },
    });
    // B's answer takes 40 ms the first time: A's failure comes first, so A takes random:3, B random:4.
    const h = harness({}, { functions: [fn], models: { "test:m": model({ B: 40 }, {}) } });
    const store = new MemoryJournalStore();
    const req = { runId: "fallback-1", worker: "fallback", input: {} };
    const first = (await executeRun(h.config, store, req)) as unknown as { status: string; waits: Array<{ key: string }> };
    expect(first.status).toBe("waiting");
    store.put(first.waits[0]!.key, { ended: "time", at: Date.now(), wait: "sleep" });
    const second = await executeRun(h.config, store, req);
    // The replay hands B's recorded answer back at once; the fetch fails again 20 ms later. B now takes random:3,
    // A's id, and A takes B's: the output's ids are swapped, and no check notices (an id has no fingerprint).
    expect(second).toMatchObject({ status: "succeeded", output: seen[0] });
  });

  it("the same code with a tool call in each branch: the replay succeeds (it failed nondeterministic)", async () => {
    const { kind, posted } = poster();
    const fn = defineFunction({
      name: "fallback-post",
      description: "A flaky fetch with a fallback post, beside a model call and its post; then a sleep",
      input: z.strictObject({}),
      toolsets: { poster: { use: "poster" } },
      async run(_input, ctx) {
        await Promise.all([
          ctx
            .step("fetch", async () => {
              await new Promise((r) => setTimeout(r, 20));
              throw new Error("upstream answered 503");
            })
            .catch(() => ctx.callTool("post", { text: "fetch failed" })),
          ctx.llmAsk("B", { model: "test:m" }).then((s) => ctx.callTool("post", { text: s })),
        ]);
        await ctx.sleep("1m");
        return posted.length;
      },
    });
    const h = harness({}, { kinds: [kind], functions: [fn], models: { "test:m": model({ B: 40 }, {}) } });
    const store = new MemoryJournalStore();
    const req = { runId: "fallback-2", worker: "fallback-post", input: {}, approvalMode: "approve_all" as const };
    const first = (await executeRun(h.config, store, req)) as unknown as { status: string; waits: Array<{ key: string }> };
    expect(first.status).toBe("waiting");
    store.put(first.waits[0]!.key, { ended: "time", at: Date.now(), wait: "sleep" });
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded" });
  });
});

describe("a deploy that changes a kind's code between activations", () => {
  it("a run paused for approval survives a new tool added to a kind it uses (its recorded turns were answered all the same)", async () => {
    const kindWith = (extra: boolean) =>
      defineToolset({
        kind: "notes",
        config: z.strictObject({}),
        create: () => ({}),
        tools: {
          write: tool({ description: "Writes a note (asks first)", input: z.strictObject({ text: z.string() }), run: ({ text }) => `wrote ${text}` }),
          ...(extra ? { read: tool({ description: "Reads the notes", input: z.strictObject({}), readOnly: true, run: () => "no notes" }) } : {}),
        },
      });
    const m: Model = {
      async request(req) {
        const called = req.messages.some((x) => x.role === "tool");
        return called
          ? { text: "done", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } }
          : { text: null, toolCalls: [{ id: "c1", name: "write", arguments: '{"text":"hi"}' }], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const files = { "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  notes: { use: notes }") };
    const store = new MemoryJournalStore();
    const req = { runId: "deploy-1", worker: "w", input: { input: "note this" } };
    const before = harness(files, { kinds: [kindWith(false)], models: { "test:m": m } });
    const paused = (await executeRun(before.config, store, req)) as unknown as Paused;
    expect(paused.pending).toMatchObject([{ key: "w/turn:1/tool:1/approval", tool: "write" }]);
    decide(store, paused.pending[0]!, true);
    // Deployed meanwhile: the kind has one more tool. The same worker file, the same recorded answers.
    const after = harness(files, { kinds: [kindWith(true)], models: { "test:m": m } });
    expect(await executeRun(after.config, store, req)).toMatchObject({ status: "succeeded", output: "done" });
  });

  it("a run paused for approval survives a change of DEFAULT_MODEL (its worker names no model; its recorded turns stand)", async () => {
    const { kind } = poster();
    const m: Model = {
      async request(req) {
        const called = req.messages.some((x) => x.role === "tool");
        return called
          ? { text: "done", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } }
          : { text: null, toolCalls: [{ id: "c1", name: "post", arguments: '{"text":"hi"}' }], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const files = { "w.worker": workerFile("name: w\ntoolsets:\n  poster: { use: poster }") };
    const store = new MemoryJournalStore();
    const req = { runId: "deploy-2", worker: "w", input: { input: "post" } };
    const before = harness(files, { kinds: [kind], models: { "test:old": m, "test:new": m }, defaultModel: "test:old" });
    const paused = (await executeRun(before.config, store, req)) as unknown as Paused;
    expect(paused.pending).toMatchObject([{ key: "w/turn:1/tool:1/approval", tool: "post" }]);
    decide(store, paused.pending[0]!, true);
    const after = harness(files, { kinds: [kind], models: { "test:old": m, "test:new": m }, defaultModel: "test:new" });
    expect(await executeRun(after.config, store, req)).toMatchObject({ status: "succeeded", output: "done" });
  });
});

describe("ctx inside ctx.step while a parallel call has met a signal", () => {
  /** `run`'s outcome, or a note that it is still pending long after it needed to settle (it needs no I/O but a 20 ms timer). */
  const settledOrStuck = (run: Promise<unknown>) =>
    Promise.race([run.catch((err: unknown) => err), new Promise((ok) => setTimeout(() => ok("still pending after 2 s: the activation hangs"), 2000))]);

  // A step that fetches (20 ms), then — against the contract — asks ctx; it catches the refusal, as the issue's own test does.
  const misuse = (ctx: { now(): Promise<number> }) => async () => {
    await new Promise((r) => setTimeout(r, 20));
    try {
      return await ctx.now();
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("a model request handed to the queue beside it: the call inside the step is refused and the run hands off (it hung)", async () => {
    const handOff: Model = {
      request: async () => {
        throw new RunInterrupted("dispatched", "test");
      },
    };
    const fn = defineFunction({
      name: "step-beside-handoff",
      description: "A model request (handed off) beside a step that misuses ctx",
      input: z.strictObject({}),
      run: async (_input, ctx) => Promise.all([ctx.llmAsk("x", { model: "test:handoff" }), ctx.step("fetch", misuse(ctx))]),
    });
    const h = harness({}, { functions: [fn], models: { "test:handoff": handOff } });
    const out = await settledOrStuck(h.run({ runId: "stuck-1", worker: "step-beside-handoff", input: {} }));
    // Should end this activation as a hand-off (RunInterrupted), the step's call refused.
    expect(out).toBeInstanceOf(RunInterrupted);
  });

  it("a sleep beside it: the call inside the step is refused and the run pauses for the sleep (it hung)", async () => {
    const fn = defineFunction({
      name: "step-beside-sleep",
      description: "A sleep beside a step that misuses ctx",
      input: z.strictObject({}),
      run: async (_input, ctx) => Promise.all([ctx.sleep("1h"), ctx.step("fetch", misuse(ctx))]),
    });
    const h = harness({}, { functions: [fn] });
    const out = await settledOrStuck(h.run({ runId: "stuck-2", worker: "step-beside-sleep", input: {} }));
    expect(out).toMatchObject({ status: "waiting" });
  });
});
