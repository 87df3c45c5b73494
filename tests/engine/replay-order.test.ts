// Issue 28: replay meets the same call at the same key whatever order parallel calls
// finished in, or fails loudly; a decision goes to the call it was made for; ctx calls
// inside ctx.step are refused; a journal key holds one step.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineFunction,
  defineToolset,
  executeRun,
  JournalKeyTaken,
  MemoryJournalStore,
  RunInterrupted,
  tool,
  type Model,
  type ModelRequest,
  type ToolContext,
} from "../../src/engine";
import { approvedArgsOf } from "../../src/engine/journal/fingerprint";
import { Journal } from "../../src/engine/journal/journal";
import { harness, poster } from "./helpers";

/** A model that answers each prompt with its own text, after `delays[prompt]` ms (0: at once). */
function echoModel(delays: Record<string, number> = {}): Model & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async request(req: ModelRequest) {
      const prompt = String(req.messages.at(-1)!.content);
      asked.push(prompt);
      const ms = delays[prompt] ?? 0;
      if (ms) await new Promise((r) => setTimeout(r, ms));
      return { text: `summary of ${prompt}`, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}

/** The pending approvals of a paused outcome, by their arguments' text. */
const pendingTexts = (outcome: unknown) => ((outcome as { pending: Array<{ args: { text: string } }> }).pending ?? []).map((p) => p.args.text);

/** What a person's decision looks like in the journal (the host binds it to the arguments it showed). */
const approveAt = (store: MemoryJournalStore, outcome: unknown, text: string) => {
  const p = (outcome as { pending: Array<{ key: string; args: unknown }> }).pending.find((x) => (x.args as { text: string }).text === text)!;
  store.put(p.key, { approved: true, by: "a test", args_hash: approvedArgsOf(p.args) });
};

describe("parallel ctx calls replay onto the calls they were recorded for", () => {
  const fanOut = defineFunction({
    name: "fan-out",
    description: "Summarises each item, then posts each summary",
    input: z.strictObject({ items: z.array(z.string()) }),
    toolsets: { poster: { use: "poster" } },
    async run({ items }, ctx) {
      return Promise.all(
        items.map(async (it) => {
          const s = await ctx.llmAsk(it, { model: "test:echo" });
          return ctx.callTool("post", { text: s });
        }),
      );
    },
  });

  it("a person approves B's post (whose summary came first); on replay B's post is sent with it, and A is asked", async () => {
    const { kind, posted } = poster();
    const model = echoModel({ A: 30 });
    const h = harness({}, { kinds: [kind], functions: [fanOut], models: { "test:echo": model } });
    const store = new MemoryJournalStore();
    const req = { runId: "fan-1", worker: "fan-out", input: { items: ["A", "B"] } };

    const first = await executeRun(h.config, store, req);
    expect(first).toMatchObject({ status: "awaiting_approval" });
    // B's summary came first, so B's post was the first call made (call:3), A's the next: both are asked about.
    const keyOf = (outcome: unknown, text: string) =>
      (outcome as { pending: Array<{ key: string; args: { text: string } }> }).pending.find((p) => p.args.text === text)?.key;
    expect(keyOf(first, "summary of B")).toBe("fan-out/call:3/approval");
    expect(keyOf(first, "summary of A")).toBe("fan-out/call:4/approval");
    approveAt(store, first, "summary of B");

    // The replay gets both summaries from the journal at once; B's still reaches B first, so B's approval reaches B's post.
    const second = await executeRun(h.config, store, req);
    expect(posted).toEqual(["summary of B"]);
    expect(second).toMatchObject({ status: "awaiting_approval" });
    expect(pendingTexts(second)).toEqual(["summary of A"]);
    approveAt(store, second, "summary of A");

    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded", output: ["posted summary of A", "posted summary of B"] });
    expect(posted).toEqual(["summary of B", "summary of A"]);
    expect(model.asked).toEqual(["A", "B"]); // each question asked once
  });

  it("ten parallel branches of two calls each replay in the order they first completed, however the delays fell", async () => {
    const order = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    const delays = Object.fromEntries(order.map((k, i) => [k, ((i * 7) % 10) * 3]));
    const stamp = defineFunction({
      name: "stamp",
      description: "Asks, then reads the clock, per item",
      input: z.strictObject({ items: z.array(z.string()) }),
      async run({ items }, ctx) {
        return Promise.all(items.map(async (it) => `${await ctx.llmAsk(it, { model: "test:echo" })}@${await ctx.randomId()}`));
      },
    });
    const h = harness({}, { functions: [stamp], models: { "test:echo": echoModel(delays) } });
    const store = new MemoryJournalStore();
    const req = { runId: "stamp-1", worker: "stamp", input: { items: order } };
    const first = await executeRun(h.config, store, req);
    expect(first).toMatchObject({ status: "succeeded" });
    // Replayed without any model (every answer recorded): the same ids reach the same items.
    const replay = harness({}, { functions: [stamp], models: { "test:echo": echoModel() } });
    expect(await executeRun(replay.config, store, req)).toEqual(first);
  });

  it("a replay whose calls come in another order than recorded fails nondeterministic, naming the key and both calls", async () => {
    let drift = false;
    const fn = defineFunction({
      name: "drifter",
      description: "Reads the clock, then asks — or the other way round",
      input: z.strictObject({}),
      async run(_input, ctx) {
        if (drift) return [await ctx.llmAsk("x", { model: "test:echo" }), await ctx.now()];
        return [await ctx.now(), await ctx.llmAsk("x", { model: "test:echo" })];
      },
    });
    const h = harness({}, { functions: [fn], models: { "test:echo": echoModel() } });
    const store = new MemoryJournalStore();
    const req = { runId: "drift-2", worker: "drifter", input: {} };
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded" });
    drift = true;
    const replayed = await executeRun(h.config, store, req);
    expect(replayed).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
    expect((replayed as { error: { message: string } }).error.message).toMatch(
      /^drifter\/ask:1: recorded for a ctx\.now call, now asked for a ctx\.llmAsk call/,
    );
  });

  it("a call made again with other arguments fails nondeterministic instead of getting the recorded result", async () => {
    let text = "first";
    const { kind } = poster();
    const fn = defineFunction({
      name: "reposter",
      description: "Posts text chosen outside ctx",
      input: z.strictObject({}),
      toolsets: { poster: { use: "poster" } },
      async run(_input, ctx) {
        await ctx.callTool("post", { text });
        return ctx.now();
      },
    });
    const h = harness({}, { kinds: [kind], functions: [fn] });
    const store = new MemoryJournalStore();
    const req = { runId: "repost-1", worker: "reposter", input: {}, approvalMode: "approve_all" as const };
    expect(await executeRun(h.config, store, req)).toMatchObject({ status: "succeeded" });
    text = "second";
    const replayed = await executeRun(h.config, store, req);
    expect(replayed).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
  });

  it("an approval is bound to the arguments it approved: reached with others on replay, nothing runs and the run fails", async () => {
    const { kind, posted } = poster();
    let text = "approved text";
    const fn = defineFunction({
      name: "bound",
      description: "Posts text chosen outside ctx",
      input: z.strictObject({}),
      toolsets: { poster: { use: "poster" } },
      run: async (_input, ctx) => ctx.callTool("post", { text }),
    });
    const h = harness({}, { kinds: [kind], functions: [fn] });
    const store = new MemoryJournalStore();
    const req = { runId: "bound-1", worker: "bound", input: {} };
    const paused = await executeRun(h.config, store, req);
    approveAt(store, paused, "approved text");
    text = "something else";
    const replayed = await executeRun(h.config, store, req);
    expect(replayed).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
    expect((replayed as { error: { message: string } }).error.message).toContain("bound/call:1/approval");
    expect(posted).toEqual([]);
  });

  it("a model step asked with another request than recorded fails nondeterministic", async () => {
    const h = (instructions: string) =>
      harness({ "w.worker": `---\nname: w\nmodel: test:echo\n---\n${instructions}\n` }, { models: { "test:echo": echoModel() } });
    const store = new MemoryJournalStore();
    const req = { runId: "model-fp", worker: "w", input: { input: "hi" } };
    expect(await executeRun(h("Be brief.").config, store, req)).toMatchObject({ status: "succeeded" });
    expect(await executeRun(h("Be brief.").config, store, req)).toMatchObject({ status: "succeeded" });
    expect(await executeRun(h("Be verbose.").config, store, req)).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
  });
});

describe("ctx inside ctx.step", () => {
  const handingOff = (): Model => ({
    request: async () => {
      throw new RunInterrupted("dispatched", "test");
    },
  });

  it("a ctx call inside a step's function is refused with an error that names both; nothing is numbered, nothing hangs", async () => {
    const fn = defineFunction({
      name: "stepper",
      description: "Asks inside a step (not allowed), then outside",
      input: z.strictObject({}),
      async run(_input, ctx) {
        const inner = await ctx.step("fetch", async () => {
          try {
            await ctx.llmAsk("inside", { model: "test:handoff" });
            return "asked";
          } catch (err) {
            return (err as Error).message;
          }
        });
        return { inner, at: await ctx.now() };
      },
    });
    const h = harness({}, { functions: [fn], models: { "test:handoff": handingOff() } });
    const store = new MemoryJournalStore();
    const req = { runId: "stepper-1", worker: "stepper", input: {} };
    const out = await executeRun(h.config, store, req);
    expect(out).toMatchObject({ status: "succeeded" });
    const { inner } = (out as { output: { inner: string } }).output;
    expect(inner).toMatch(/ctx\.llmAsk was called inside ctx\.step\("fetch"\)/);
    // The refused call took no number: the clock is the context's first effect.
    expect([...store.entries.keys()]).toEqual(["stepper/step:fetch", "stepper/now:1"]);
    expect(await executeRun(h.config, store, req)).toEqual(out);
  });

  it("ctx.step inside ctx.step, and a parallel branch's calls while a step runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const fn = defineFunction({
      name: "nester",
      description: "A nested step (refused) and a parallel ask (fine)",
      input: z.strictObject({}),
      async run(_input, ctx) {
        const [outer, asked] = await Promise.all([
          ctx.step("outer", async () => {
            await gate;
            return ctx
              .step("inner", () => 1)
              .then(
                () => "nested ran",
                (err: Error) => err.message,
              );
          }),
          (async () => {
            const a = await ctx.llmAsk("beside", { model: "test:echo" });
            release();
            return a;
          })(),
        ]);
        return { outer, asked };
      },
    });
    const h = harness({}, { functions: [fn], models: { "test:echo": echoModel() } });
    const out = await executeRun(h.config, new MemoryJournalStore(), { runId: "nester-1", worker: "nester", input: {} });
    expect(out).toMatchObject({ status: "succeeded", output: { asked: "summary of beside" } });
    expect((out as { output: { outer: string } }).output.outer).toMatch(/ctx\.step was called inside ctx\.step\("outer"\)/);
  });

  it("a kind's tool that calls ctx inside its step gets the same refusal (ctx of a tool, not only of a function)", async () => {
    const kind = defineToolset({
      kind: "misuse",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        go: tool({
          description: "Misuses a step",
          input: z.strictObject({}),
          readOnly: true,
          run: (_args, ctx: ToolContext) => ctx.step("s", () => ctx.now()).catch((err: Error) => err.message),
        }),
      },
    });
    const h = harness({ "w.worker": "---\nname: w\nmodel: test:tools\ntoolsets:\n  misuse: { use: misuse }\n---\nGo.\n" }, { kinds: [kind] });
    const store = new MemoryJournalStore();
    expect(await executeRun(h.config, store, { runId: "misuse-1", worker: "w", input: { input: "x" } })).toMatchObject({ status: "succeeded" });
    expect(JSON.stringify(store.entries.get("w/turn:1/tool:1/result"))).toMatch(/ctx\.now was called inside ctx\.step/);
  });
});

describe("a journal key holds one step", () => {
  it("a store refuses a second write of a key, and a decision the host wrote first is the one the engine keeps", async () => {
    const store = new MemoryJournalStore();
    store.put("w/turn:1/model", { text: "x" });
    expect(() => store.put("w/turn:1/model", { text: "y" })).toThrow(JournalKeyTaken);
    const journal = await Journal.open(store);
    // A person decides while the activation waits; the engine then decides the same approval without asking.
    store.put("w/turn:1/tool:1/approval", { approved: false, by: "a person" });
    expect(await journal.record("w/turn:1/tool:1/approval", { approved: true, by: "approval_mode approve_all" })).toEqual({
      approved: false,
      by: "a person",
    });
  });

  it("an engine step written twice is a storage failure that no retry helps", async () => {
    const store = new MemoryJournalStore();
    const journal = await Journal.open(store);
    store.put("w/turn:1/model", { text: "someone else" });
    await expect(journal.record("w/turn:1/model", { text: "mine" })).rejects.toMatchObject({ name: "StorageError", permanent: true });
  });
});
