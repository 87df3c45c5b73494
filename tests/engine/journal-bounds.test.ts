import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, MemoryJournalStore, scriptedModel, StorageError, tool, type ModelRequest } from "../../src/engine";
import { cutToJsonBytes, fitsStep, MAX_STEP_BYTES, stepBytes, utf8Bytes } from "../../src/engine/journal/bounds";
import { harness, workerFile } from "./helpers";

const toolResults = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));

/** ~3.6 MB as JSON: Japanese text, accents, quotes and control characters (escaped to 6 bytes each). */
const bigText = (chars: number) => '日本語のテキスト "é" \u0001\t'.repeat(Math.ceil(chars / 15)).slice(0, chars);

/** Tools that do what the bounds are about: return a lot, throw a lot, memoize a lot. */
function bigKind(calls: string[]) {
  return defineToolset({
    kind: "big",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      dump: tool({
        description: "returns ~3.6 MB as JSON",
        input: z.strictObject({}),
        readOnly: true,
        run: (_a, ctx) => (calls.push(ctx.callPath), { status: 200, items: [bigText(700_000), bigText(650_000)] }),
      }),
      fail: tool({
        description: "throws a huge error",
        input: z.strictObject({}),
        readOnly: true,
        run: (_a, ctx) => {
          calls.push(ctx.callPath);
          throw new Error(bigText(900_000));
        },
      }),
      memo: tool({
        description: "memoizes a huge value; with swallow, catches the failure and goes on",
        input: z.strictObject({ swallow: z.boolean().default(false) }),
        readOnly: true,
        async run({ swallow }, ctx) {
          calls.push(ctx.callPath);
          try {
            await ctx.step("big", () => bigText(900_000));
          } catch (err) {
            if (!swallow) throw err;
          }
          return "went on";
        },
      }),
      small: tool({
        description: "memoizes a small value",
        input: z.strictObject({ swallow: z.boolean().default(false) }),
        readOnly: true,
        async run({ swallow }, ctx) {
          calls.push(ctx.callPath);
          try {
            return await ctx.step("small", () => "small");
          } catch (err) {
            if (!swallow) throw err;
            return "swallowed";
          }
        },
      }),
    },
  });
}

function setup(reply: (req: ModelRequest, n: number) => Parameters<typeof scriptedModel>[0] extends infer _ ? any : never) {
  const calls: string[] = [];
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req, n) => (requests.push(req), reply(req, n)));
  const files = {
    "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  big: { use: big }\n  workers: [inner]"),
    "inner.worker": workerFile("name: inner\nmodel: test:m\ntoolsets:\n  big: { use: big }"),
  };
  const h = harness(files, { kinds: [bigKind(calls)], models: { "test:m": model } });
  return { h, calls, requests };
}

/** A store whose writes fail from the `failAt`-th put on, as a storage outage or SQLITE_TOOBIG would. */
class FailingStore extends MemoryJournalStore {
  puts = 0;
  constructor(
    private readonly failAt: number,
    private readonly error = new Error("SQL failed: string or blob too big: SQLITE_TOOBIG\n  in: INSERT INTO journal …"),
  ) {
    super();
  }
  override put(key: string, value: unknown): void {
    if (++this.puts >= this.failAt) throw this.error;
    super.put(key, value);
  }
}

describe("journal size bound", () => {
  it("counts UTF-8 bytes as TextEncoder writes them (pairs 4 bytes, a lone surrogate 3), and fitsStep agrees with stepBytes", () => {
    const alphabet = ["a", "é", "日", "😀", "\ud800", "\udc00", "\u2028", "\u007f", "\u0080", "\u07ff", "\u0800"];
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 300; round++) {
      const text = Array.from({ length: rand(40) }, () => alphabet[rand(alphabet.length)]).join("");
      expect(utf8Bytes(text), JSON.stringify(text)).toBe(new TextEncoder().encode(text).byteLength);
    }
    for (const text of [bigText(400_000), bigText(420_000), "a".repeat(MAX_STEP_BYTES - 12), "😀".repeat(MAX_STEP_BYTES / 4)]) {
      const json = JSON.stringify(text);
      expect(fitsStep("k", json)).toBe(stepBytes("k", text) <= MAX_STEP_BYTES);
    }
  });

  it("cuts text to the most that fits as JSON, counting UTF-8 and escapes, never splitting a character", () => {
    const alphabet = ["a", '"', "\\", "\n", "\u0001", "é", "日", "😀", "\ud800", "\u2028"];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: 1 + rand(60) }, () => alphabet[rand(alphabet.length)]).join("");
      const max = rand(120);
      const cut = cutToJsonBytes(text, max);
      const bytes = utf8Bytes(JSON.stringify(cut)) - 2;
      expect(bytes, JSON.stringify({ text, max })).toBeLessThanOrEqual(max);
      expect(text.startsWith(cut)).toBe(true);
      // Maximal: the next whole character would not fit.
      const next = [...text.slice(cut.length)][0];
      if (next) expect(utf8Bytes(JSON.stringify(cut + next)) - 2).toBeGreaterThan(max);
    }
  });

  it("a tool result over the bound is recorded cut to fit and flagged; the model reads the note; replay never runs the tool again", async () => {
    const { h, calls, requests } = setup((req, n) =>
      n === 0 ? { toolCalls: [{ id: "d", name: "dump", args: {} }] } : { text: `got ${toolResults(req)[0]!.length}` },
    );
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "w", input: { input: "x" } }, store);
    expect(out.status).toBe("succeeded");
    const key = "w/turn:1/tool:1/result";
    const recorded = store.entries.get(key) as { ok: boolean; value: string; truncatedFrom: number };
    const full = JSON.stringify({ status: 200, items: [bigText(700_000), bigText(650_000)] });
    expect(utf8Bytes(full)).toBeGreaterThan(3_500_000);
    expect(recorded).toMatchObject({ ok: true, truncatedFrom: utf8Bytes(full) });
    expect(full.startsWith(recorded.value.slice(0, recorded.value.indexOf("…[cut by edgework")))).toBe(true);
    expect(recorded.value).toMatch(/…\[cut by edgework to fit the run's journal: \d+ bytes in full\]$/);
    // Measured as the store writes it: the whole step, key included, is within the bound and close to it.
    const bytes = stepBytes(key, recorded);
    expect(bytes).toBeLessThanOrEqual(MAX_STEP_BYTES);
    expect(bytes).toBeGreaterThan(MAX_STEP_BYTES - 16);
    expect(toolResults(requests[1]!)[0]).toBe(recorded.value);

    const replay = setup(() => ({ text: "never asked" }));
    expect(await replay.h.run({ worker: "w", input: { input: "x" } }, store)).toEqual(out);
    expect(calls).toEqual(["w/turn:1/tool:1"]);
    expect(replay.calls).toEqual([]);
  });

  it("an error message over the bound is recorded cut and flagged too", async () => {
    const { h, requests } = setup((_req, n) => (n === 0 ? { toolCalls: [{ id: "f", name: "fail", args: {} }] } : { text: "ok" }));
    const store = new MemoryJournalStore();
    expect((await h.run({ worker: "w", input: { input: "x" } }, store)).status).toBe("succeeded");
    const recorded = store.entries.get("w/turn:1/tool:1/result") as { ok: boolean; error: string; truncatedFrom: number };
    expect(recorded).toMatchObject({ ok: false, truncatedFrom: utf8Bytes(bigText(900_000)) });
    expect(stepBytes("w/turn:1/tool:1/result", recorded)).toBeLessThanOrEqual(MAX_STEP_BYTES);
    expect(toolResults(requests[1]!)[0]).toBe(`Error: ${recorded.error}`);
  });

  it("a model answer over the bound fails the run at once with too_large: one request, nothing recorded, its cost counted", async () => {
    const { h, requests } = setup(() => ({ text: bigText(600_000), usage: { inputTokens: 7, outputTokens: 900_000 } }));
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "w", input: { input: "x" } }, store);
    expect(out).toMatchObject({
      status: "failed",
      error: {
        code: "too_large",
        message: expect.stringMatching(/^w\.worker: model test:m answered with \d+ bytes .*over the journal's bound of 1500000 bytes per step/),
      },
      usage: { requests: 1, outputTokens: 900_000 },
    });
    expect(requests).toHaveLength(1);
    expect(store.entries.size).toBe(0);
  });

  it("a ctx.step value over the bound fails the run naming the step, even when the tool catches the error", async () => {
    for (const swallow of [false, true]) {
      const { h, calls, requests } = setup((_req, n) =>
        n === 0 ? { toolCalls: [{ id: "m", name: "memo", args: { swallow } }] } : { text: "should not get here" },
      );
      const store = new MemoryJournalStore();
      const out = await h.run({ worker: "w", input: { input: "x" } }, store);
      expect(out, `swallow ${swallow}`).toMatchObject({
        status: "failed",
        error: { code: "too_large", message: expect.stringContaining("journal step w/turn:1/tool:1/step:big is ") },
      });
      expect(calls).toEqual(["w/turn:1/tool:1"]);
      expect(requests).toHaveLength(1);
      expect(store.entries.has("w/turn:1/tool:1/result")).toBe(false);
    }
  });
});

describe("a journal that cannot write", () => {
  it("is never a tool result: the activation stops with a StorageError, in the run's worker and in a nested one", async () => {
    // Puts: 1 model answer, then the tool's step (2) fails — directly, and inside the nested worker `inner`.
    const direct = setup((_r, n) => (n === 0 ? { toolCalls: [{ id: "s", name: "small", args: {} }] } : { text: "no" }));
    const nested = setup((req, n) => {
      const inner = req.messages[1]!.content === "go";
      if (inner) return { toolCalls: [{ id: "s", name: "small", args: {} }] };
      return n === 0 ? { toolCalls: [{ id: "i", name: "inner", args: { input: "go" } }] } : { text: "no" };
    });
    for (const [name, { h, requests }, failAt] of [
      ["direct", direct, 2],
      ["nested", nested, 3],
    ] as const) {
      const store = new FailingStore(failAt);
      const err = await h.run({ worker: "w", input: { input: "x" } }, store).catch((e) => e);
      expect(err, name).toBeInstanceOf(StorageError);
      expect(err.message).toMatch(/^the journal could not record step w\/turn:1\/tool:\S+\/step:small: SQL failed: string or blob too big/);
      // No model saw the failure as a tool result, and nothing recorded it as the tool's outcome.
      expect(requests.flatMap(toolResults), name).toEqual([]);
      expect(
        [...store.entries.keys()].filter((k) => k.endsWith("/result")),
        name,
      ).toEqual([]);
    }
  });

  it("stops the activation even when a tool catches the failure and returns", async () => {
    const { h, requests } = setup((_r, n) => (n === 0 ? { toolCalls: [{ id: "s", name: "small", args: { swallow: true } }] } : { text: "no" }));
    const store = new FailingStore(2, new Error("storage hiccup"));
    await expect(h.run({ worker: "w", input: { input: "x" } }, store)).rejects.toThrow(
      new StorageError("the journal could not record step w/turn:1/tool:1/step:small: storage hiccup"),
    );
    expect(requests).toHaveLength(1);
    expect(store.entries.has("w/turn:1/tool:1/result")).toBe(false);
  });
});
