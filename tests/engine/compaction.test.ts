import { describe, expect, it } from "vitest";
import { MemoryJournalStore, scriptedModel, type ModelRequest } from "../../src/engine";
import { compactKey, messageKey, parseKey, summaryKey } from "../../src/engine/journal/keys";
import { DEFAULT_CONTEXT, historyTokens, planCompaction, type CompactionRecord } from "../../src/engine/run/compaction";
import { readWorkerFile } from "../../src/engine/catalog/worker-file";
import { parseYaml } from "../../src/build/yaml";
import type { Message } from "../../src/engine/types/model";
import { harness, workerFile } from "./helpers";

/** Records the conversation's n-th message as the run's host does. */
const sendTo = (store: MemoryJournalStore, root: string, n: number, text: string) => store.put(messageKey(root, n), { text, at: n });

/** Each message ~250 tokens (1,000 characters): a budget of 2,000 holds about eight. */
const long = (n: number) => `message ${n} ${"x".repeat(1_000)}`;

/** A chat worker and a summarizer model that count their requests; the chat model answers each message with its number. */
function chat(context: string) {
  const asked: ModelRequest[] = [];
  const model = scriptedModel((req) => (asked.push(req), { text: `answer ${req.messages.filter((m) => m.role === "user").length}` }));
  const summarizer = scriptedModel((req) => ({ text: `summary of ${req.messages[1]!.content!.length} characters` }));
  const h = harness({ "c.worker": workerFile(`name: c\nmodel: test:chat\ncontext: ${context}`) }, { models: { "test:chat": model, "test:sum": summarizer } });
  return { h, model, summarizer, asked };
}

/** Runs the conversation to its `n`-th message, one message at a time, as the host wakes it for each. */
async function converse(h: ReturnType<typeof chat>["h"], store: MemoryJournalStore, from: number, to: number): Promise<unknown> {
  let output: unknown;
  for (let n = from; n <= to; n++) {
    if (n > 1) sendTo(store, "c", n, long(n));
    const res = await h.run({ worker: "c", input: { input: long(1) }, runId: "r" }, store);
    expect(res, `message ${n}`).toMatchObject({ status: "succeeded" });
    output = (res as { output: unknown }).output;
  }
  return output;
}

describe("keeping a long conversation within the model's context", () => {
  it("summarize: past the budget an older stretch is summarized once, journaled, and replaced; the model is sent the first message, the summary, the last ones", async () => {
    const t = chat("{ max_tokens: 2000, compact: summarize, model: test:sum, keep_last: 4 }");
    const store = new MemoryJournalStore();
    const answered = await converse(t.h, store, 1, 30);
    const compactions = [...store.entries.keys()].filter((k) => parseKey(k).kind === "compact");
    expect(compactions.length).toBeGreaterThan(1);
    expect(t.summarizer.requests).toBe(compactions.length);
    for (const k of compactions) expect(store.entries.has(summaryKey(k))).toBe(true);
    // Every request the chat model got fit the budget (the estimate it was kept under).
    for (const req of t.asked) expect(historyTokens(req.messages)).toBeLessThanOrEqual(2_000);
    const last = t.asked.at(-1)!.messages;
    expect(last[1]).toMatchObject({ role: "user", content: long(1) });
    expect(String(last[2]!.content)).toMatch(/^\[Summary of \d+ earlier messages of this conversation, written by test:sum to fit the context:\]\nsummary of/);
    expect(last.at(-1)).toMatchObject({ role: "user", content: long(30) });
    const first = store.entries.get(compactions[0]!) as CompactionRecord;
    expect(first).toMatchObject({ compact: "summarize", from: 2, model: "test:sum" });
    expect(first.tokensAfter).toBeLessThan(first.tokensBefore);

    // Replayed from the journal (a crash, an eviction): no model is asked again, the same answer.
    const requests = { chat: t.model.requests, sum: t.summarizer.requests };
    expect(await t.h.run({ worker: "c", input: { input: long(1) }, runId: "r" }, store)).toMatchObject({ status: "succeeded", output: answered });
    expect({ chat: t.model.requests, sum: t.summarizer.requests }).toEqual(requests);
  });

  it("a crash between the summary and its compaction record asks the summarizer no second time", async () => {
    const t = chat("{ max_tokens: 2000, compact: summarize, model: test:sum, keep_last: 4 }");
    const store = new MemoryJournalStore();
    await converse(t.h, store, 1, 12);
    const [key] = [...store.entries.keys()].filter((k) => parseKey(k).kind === "compact");
    // As if the activation stopped after the summary's step and before the record, and before the turn's answer.
    const { turn } = parseKey(key!) as { turn: number };
    for (const k of [...store.entries.keys()]) {
      const p = parseKey(k);
      if (k === key || ((p.kind === "model" || p.kind === "compact") && p.turn > turn) || (p.kind === "model" && p.turn === turn)) store.entries.delete(k);
      if (p.kind === "message" && p.n > turn) store.entries.delete(k);
    }
    const sum = t.summarizer.requests;
    expect(await t.h.run({ worker: "c", input: { input: long(1) }, runId: "r" }, store)).toMatchObject({ status: "succeeded" });
    expect(t.summarizer.requests).toBe(sum);
    expect(store.entries.get(key!)).toMatchObject({ compact: "summarize" });
  });

  it("window: the oldest turns are dropped, the first message and the last N kept, a note in their place; no model asked for it", async () => {
    const t = chat("{ max_tokens: 2000, compact: window, keep_last: 3 }");
    const store = new MemoryJournalStore();
    await converse(t.h, store, 1, 20);
    expect(t.summarizer.requests).toBe(0);
    const last = t.asked.at(-1)!.messages;
    expect(last[1]).toMatchObject({ content: long(1) });
    expect(last[2]).toMatchObject({
      role: "assistant",
      content: expect.stringMatching(/^\[\d+ earlier messages of this conversation were dropped to fit the context\.\]$/),
    });
    expect(last.at(-1)).toMatchObject({ content: long(20) });
    for (const req of t.asked) expect(historyTokens(req.messages)).toBeLessThanOrEqual(2_000);
  });

  it("a turn recorded without a compaction is never compacted on replay (a run recorded before, or under another budget)", async () => {
    const wide = chat("{ max_tokens: 1000000, compact: window }");
    const store = new MemoryJournalStore();
    const answered = await converse(wide.h, store, 1, 12);
    const narrow = chat("{ max_tokens: 2000, compact: window }");
    expect(await narrow.h.run({ worker: "c", input: { input: long(1) }, runId: "r" }, store)).toMatchObject({ status: "succeeded", output: answered });
    expect(narrow.model.requests).toBe(0);
    expect([...store.entries.keys()].some((k) => parseKey(k).kind === "compact")).toBe(false);
  });

  it("hostile: a summarizer that answers at length is cut to a quarter of the budget; the excerpt it is sent is bounded", async () => {
    const sent: ModelRequest[] = [];
    const asked: ModelRequest[] = [];
    const model = scriptedModel((req) => (asked.push(req), { text: "ok" }));
    const summarizer = scriptedModel((req) => (sent.push(req), { text: "s".repeat(100_000) }));
    const h = harness(
      { "c.worker": workerFile("name: c\nmodel: test:chat\ncontext: { max_tokens: 2000, compact: summarize, model: test:sum, keep_last: 2 }") },
      { models: { "test:chat": model, "test:sum": summarizer } },
    );
    const store = new MemoryJournalStore();
    const huge = (n: number) => `m${n} ${"y".repeat(15_000)}`;
    expect(await h.run({ worker: "c", input: { input: huge(1) }, runId: "r" }, store)).toMatchObject({ status: "succeeded" });
    for (let n = 2; n <= 4; n++) {
      sendTo(store, "c", n, huge(n));
      expect(await h.run({ worker: "c", input: { input: huge(1) }, runId: "r" }, store)).toMatchObject({ status: "succeeded" });
    }
    expect(summarizer.requests).toBeGreaterThan(0);
    // Each message of the excerpt cut to 4,000 characters.
    for (const req of sent) for (const part of String(req.messages[1]!.content).split("\n\n")) expect(part.length).toBeLessThanOrEqual(4_001);
    const [key] = [...store.entries.keys()].filter((k) => parseKey(k).kind === "compact");
    expect(store.entries.has(summaryKey(key!))).toBe(true);
    // The summary in the history: its header, then at most max_tokens (2,000) characters of the model's text.
    const summary = asked.flatMap((r) => r.messages).find((m) => String(m.content).startsWith("[Summary of"))!;
    expect(String(summary.content).split("\n")[1]).toBe("s".repeat(2_000));
  });

  it("the kept tail never starts with a tool result (its call would be cut off)", () => {
    const m: Message[] = [
      { role: "system", content: "s" },
      { role: "user", content: long(1) },
      { role: "user", content: long(2) },
      { role: "assistant", content: null, toolCalls: [{ id: "a", name: "t", arguments: "{}" }] },
      { role: "tool", toolCallId: "a", content: long(3) },
      { role: "tool", toolCallId: "a", content: long(4) },
    ];
    const plan = planCompaction(m, { maxTokens: 1_000, compact: "window", keepLast: 2 });
    expect(plan).toEqual({ from: 2, to: 3 });
    expect(planCompaction(m, DEFAULT_CONTEXT)).toBeUndefined();
  });

  it("context: is checked at build time, naming the field", () => {
    const problems = (context: string) => {
      return readWorkerFile("workers/c.worker", workerFile(`name: c\ncontext: ${context}`), parseYaml).problems.map((e) => e.message);
    };
    expect(problems("{ max_tokens: 64000, compact: summarize, model: openai:gpt-4.1-mini, keep_last: 10 }")).toEqual([]);
    expect(problems("{ max_tokens: 10, compact: window }").join()).toMatch(/context\.max_tokens/);
    expect(problems("{ max_tokens: 64000, compact: forget }").join()).toMatch(/context\.compact/);
    expect(problems("{ max_tokens: 64000, compact: window, model: openai:x }").join()).toMatch(/context\.model: only compact: summarize/);
    expect(problems("{ max_tokens: 64000, compact: window, keep_last: 1000 }").join()).toMatch(/context\.keep_last/);
    expect(problems("{ max_tokens: 64000, compact: window, extra: 1 }").join()).toMatch(/context/);
  });

  it("the compaction key is one of the grammar's", () => {
    expect(parseKey(compactKey("c", 7))).toEqual({ kind: "compact", frame: "c", turn: 7 });
    expect(parseKey(summaryKey(compactKey("c", 7)))).toMatchObject({ kind: "effect", effect: "ask", n: 1, call: "c/turn:7/compact" });
  });
});
