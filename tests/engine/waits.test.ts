import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineFunction, MemoryJournalStore, ToolError, wait, type PendingWait } from "../../src/engine";
import { parseKey } from "../../src/engine/journal/keys";
import { boundedWait, durationMs, eventName, MAX_WAIT_MS } from "../../src/engine/waits/bounds";
import { harness } from "./helpers";

describe("wait bounds: durations, names and keys from code, models and callers", () => {
  it("durations are ms or <n><s|m|h|d>; anything else is refused with what was given, quickly", () => {
    expect(durationMs("90s", "d")).toBe(90_000);
    expect(durationMs("20m", "d")).toBe(1_200_000);
    expect(durationMs(" 2h ", "d")).toBe(7_200_000);
    expect(durationMs("7d", "d")).toBe(604_800_000);
    expect(durationMs(1500.7, "d")).toBe(1500);
    for (const bad of ["", "5", "5 m", "-5m", "5w", "1e9s", "0x10s", "5m5s", "9999999999d", "NaN", "Infinity", `${"9".repeat(5000)}s`]) {
      expect(() => durationMs(bad, "timeout"), bad.slice(0, 20)).toThrow(ToolError);
    }
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => durationMs(bad, "timeout")).toThrow(/not a duration/);
    const start = performance.now();
    expect(() => durationMs(`${"1".repeat(100_000)}x`, "timeout")).toThrow(ToolError);
    expect(performance.now() - start).toBeLessThan(50);
  });

  it("a wait longer than its bound names both", () => {
    expect(() => boundedWait(3 * 3_600_000, 2 * 3_600_000, "sleep")).toThrow("sleep: 3h is longer than the longest wait allowed here (2h)");
    expect(boundedWait(MAX_WAIT_MS, MAX_WAIT_MS, "x")).toBe(MAX_WAIT_MS);
  });

  it("event names are 1-64 of A-Z a-z 0-9 _ . -: no separator, no control character, no key segment", () => {
    expect(eventName("ci_finished", "n")).toBe("ci_finished");
    for (const bad of ["", "a/b", "a:b", "x".repeat(65), "new\nline", "wait:1", "../x", "ça"]) expect(() => eventName(bad, "n")).toThrow(ToolError);
  });

  it("the `wait` kind's max is checked when the worker file loads", () => {
    expect(wait.config.safeParse({ max: "2h" })).toMatchObject({ success: true, data: { max: 7_200_000 } });
    expect(wait.config.safeParse({})).toMatchObject({ success: true, data: { max: 7 * 86_400_000 } });
    for (const bad of ["3y", "400d", "2 h", 5]) expect(wait.config.safeParse({ max: bad }).success, String(bad)).toBe(false);
  });
});

describe("waits in the engine: a pause, then the host's recorded end", () => {
  const waiter = defineFunction({
    name: "waiter",
    description: "waits for an event named by its input",
    input: z.strictObject({ event: z.string(), key: z.string().optional() }),
    async run({ event, key }, ctx) {
      await ctx.sleep("1m", { reason: "r".repeat(1000) });
      return ctx.waitForEvent(event, { timeout: "5m", ...(key ? { key } : {}) });
    },
  });

  it("each wait pauses the run under <call>/wait:<n>, whatever the event name or key; the recorded end lets the replay through", async () => {
    const recorded: PendingWait[] = [];
    const h = harness({}, { functions: [waiter] });
    const config = { ...h.config, recordWait: (w: PendingWait) => void recorded.push(w), clock: { now: () => 1_000 } };
    const store = new MemoryJournalStore();
    const { executeRun } = await import("../../src/engine");
    const run = () => executeRun(config, store, { runId: "r", worker: "waiter", input: { event: "go", key: "a/b:c/../d" } });

    const first = await run();
    expect(first).toMatchObject({ status: "waiting", pending: [], waits: [{ kind: "sleep", since: 1_000, until: 61_000, key: "waiter/wait:1" }] });
    // The reason is cut; nothing of it is in the key.
    expect(recorded[0]!.reason).toHaveLength(300);
    await store.put("waiter/wait:1", { ended: "time", at: 61_000 });

    const second = await run();
    expect(second).toMatchObject({
      status: "waiting",
      waits: [{ kind: "event", name: "go", correlation: "a/b:c/../d", until: 301_000, key: "waiter/wait:2" }],
    });
    expect(parseKey("waiter/wait:2")).toEqual({ kind: "effect", call: "waiter", effect: "wait", n: 2 });
    await store.put("waiter/wait:2", { ended: "event", at: 100_000, id: "e1", payload: { ok: 1 } });

    expect(await run()).toMatchObject({ status: "succeeded", output: { status: "received", id: "e1", payload: { ok: 1 } } });
    // Each wait was asked of the host once: a replay past an ended wait never asks it again.
    expect(recorded.map((w) => w.key)).toEqual(["waiter/wait:1", "waiter/wait:2"]);
  });

  it("a hostile event name fails the call before any wait is recorded", async () => {
    const recorded: PendingWait[] = [];
    const h = harness({}, { functions: [waiter] });
    const { executeRun } = await import("../../src/engine");
    const store = new MemoryJournalStore();
    await store.put("waiter/wait:1", { ended: "time", at: 1 });
    const out = await executeRun({ ...h.config, recordWait: (w) => void recorded.push(w) }, store, { runId: "r", worker: "waiter", input: { event: "../x" } });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "function_failed", message: expect.stringContaining("ctx.waitForEvent: an event name is 1-64 characters") },
    });
    expect(recorded).toEqual([]);
  });
});

describe("a question to a person pauses the run as `waiting`: it ends by itself, answered or expired", () => {
  const asker = defineFunction({
    name: "asker",
    description: "asks a person, then sleeps",
    input: z.strictObject({}),
    async run(_input, ctx) {
      const answer = await ctx.askHuman({ question: "41 or 42?" });
      await ctx.sleep("1m");
      return answer;
    },
  });

  it("question-only: `waiting`, the question named by its id in `waitingFor`; answered, the next pause lists its sleep", async () => {
    const h = harness({}, { functions: [asker] });
    const { executeRun, waitingFor } = await import("../../src/engine");
    const store = new MemoryJournalStore();
    const run = () => executeRun({ ...h.config, clock: { now: () => 1_000 } }, store, { runId: "r", worker: "asker", input: {} });
    const first = await run();
    expect(first).toMatchObject({ status: "waiting", pending: [{ kind: "question", tool: "ask_human" }], waits: [] });
    if (first.status !== "waiting") return;
    expect(waitingFor(first)).toEqual([{ kind: "question", name: first.pending[0]!.id }]);

    await store.put(first.pending[0]!.key, { approved: true, by: "api", answer: "42" });
    const second = await run();
    expect(second).toMatchObject({ status: "waiting", pending: [], waits: [{ kind: "sleep" }] });
    if (second.status === "waiting") expect(waitingFor(second)).toEqual([{ kind: "sleep" }]);
  });

  it("deciders.ask from code is read as a worker file's: normalized, bounded, a bad entry named", async () => {
    const askWith = (ask: unknown) =>
      defineFunction({
        name: "picky",
        description: "asks someone named",
        input: z.strictObject({}),
        run: (_input, ctx) => ctx.askHuman({ question: "ok?", deciders: { ask: ask as string[] } }),
      });
    const { executeRun } = await import("../../src/engine");
    const run = (ask: unknown) =>
      executeRun(harness({}, { functions: [askWith(ask)] }).config, new MemoryJournalStore(), { runId: "r", worker: "picky", input: {} });

    const paused = await run([" Lead@Example.COM ", "*@Ops.Example.com", "API"]);
    expect(paused).toMatchObject({ status: "waiting", pending: [{ kind: "question", deciders: { ask: ["lead@example.com", "*@ops.example.com", "api"] } }] });
    for (const [ask, message] of [
      [["lead@example.com", "*@com"], "askHuman: deciders.ask[1]:"],
      [["not an address"], "askHuman: deciders.ask[0]:"],
      [Array(21).fill("a@example.com"), "deciders.ask has 21 entries; at most 20"],
      ["lead@example.com", "deciders.ask must be a list"],
    ] as const)
      expect(await run(ask)).toMatchObject({ status: "failed", error: { message: expect.stringContaining(message) } });
  });
});
