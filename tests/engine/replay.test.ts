import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, executeRun, MemoryJournalStore, scriptedModel, tool, type ModelRequest } from "../../src/engine";
import { harness, workerFile } from "./helpers";

/** Tools whose side effects are counted outside the run, by call path. */
function effectKinds(executed: string[]) {
  return defineToolset({
    kind: "fx",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      effect: tool({
        description: "A side effect",
        input: z.strictObject({ tag: z.string() }),
        readOnly: true,
        run: ({ tag }, ctx) => (executed.push(ctx.callPath), `did ${tag}`),
      }),
      stamp: tool({
        description: "Uses the clock, a random id and a memoized step",
        input: z.strictObject({}),
        readOnly: true,
        async run(_a, ctx) {
          executed.push(ctx.callPath);
          const at = await ctx.now();
          const id = await ctx.randomId();
          const memo = await ctx.step("once", () => `memo@${at}`);
          return { at, idLength: id.length, memo };
        },
      }),
    },
  });
}

const turnOf = (req: ModelRequest) => req.messages.filter((m) => m.role === "assistant").length;
/** Call ids from the turn, not from a request counter: a fresh model in a replay names calls the same. */
const calls = (req: ModelRequest, ...list: Array<{ name: string; args: unknown }>) => ({
  toolCalls: list.map((c, i) => ({ ...c, id: `t${turnOf(req)}_${i}` })),
});
const results = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));

/** Models that answer from the request alone, so a replay that skips requests still gets the same answers. */
function models(requests: string[]) {
  const lead = scriptedModel((req) => {
    requests.push(`lead/${turnOf(req)}`);
    switch (turnOf(req)) {
      case 0:
        return calls(req, { name: "effect", args: { tag: "a" } }, { name: "helper", args: { input: "help" } });
      case 1:
        return calls(req, { name: "effect", args: { tag: "b" } }, { name: "stamp", args: {} });
      default:
        return { text: `lead: ${results(req).join(" | ")}` };
    }
  });
  const helper = scriptedModel((req) => {
    requests.push(`helper/${turnOf(req)}`);
    return turnOf(req) === 0
      ? calls(req, { name: "effect", args: { tag: "h1" } }, { name: "effect", args: { tag: "h2" } }, { name: "deep", args: { input: "d" } })
      : { text: `helper: ${results(req).join(", ")}` };
  });
  const deep = scriptedModel((req) => {
    requests.push(`deep/${turnOf(req)}`);
    return turnOf(req) === 0 ? calls(req, { name: "effect", args: { tag: "d1" } }) : { text: `deep: ${results(req)[0]}` };
  });
  return { "test:lead": lead, "test:helper": helper, "test:deep": deep };
}

const files = {
  "lead.worker": workerFile("name: lead\nmodel: test:lead\ntoolsets:\n  fx: { use: fx }\n  workers: [helper]"),
  "helper.worker": workerFile("name: helper\nmodel: test:helper\ntoolsets:\n  fx: { use: fx }\n  workers: [deep]"),
  "deep.worker": workerFile("name: deep\nmodel: test:deep\ntoolsets:\n  fx: { use: fx }"),
};

function setup() {
  const executed: string[] = [];
  const requests: string[] = [];
  let clockReads = 0;
  const h = harness(files, { kinds: [effectKinds(executed)], models: models(requests) });
  const run = (store: MemoryJournalStore) =>
    executeRun({ ...h.config, clock: { now: () => (clockReads++, 1_700_000_000_000) } }, store, { runId: "replay", worker: "lead", input: { input: "go" } });
  return { executed, requests, run, clockReads: () => clockReads };
}

/** Is this step's effect already in the journal prefix, itself or inside a recorded call? */
function covered(key: string, prefix: Set<string>): boolean {
  if (prefix.has(key)) return true;
  for (const k of prefix) if (k.endsWith("/result") && key.startsWith(k.slice(0, -"result".length))) return true;
  return false;
}

describe("replay", () => {
  it("from every prefix of a nested run's journal: nothing recorded runs again, everything else runs once, same output", async () => {
    const original = setup();
    const full = new MemoryJournalStore();
    const first = await original.run(full);
    expect(first.status).toBe("succeeded");
    expect(original.executed).toHaveLength(6); // a, b, stamp, h1, h2, d1
    expect(original.requests).toHaveLength(7);
    const entries = [...full.entries];
    expect(entries).toHaveLength(18); // 7 model steps, 8 tool results (2 of them nested workers), clock, random id, step
    const modelKeys = entries.map(([k]) => k).filter((k) => k.endsWith("/model"));
    expect(modelKeys).toHaveLength(7);

    for (let k = 0; k <= entries.length; k++) {
      const store = new MemoryJournalStore();
      for (const [key, value] of entries.slice(0, k)) store.put(key, value);
      const prefix = new Set(entries.slice(0, k).map(([key]) => key));
      const replay = setup();
      const out = await replay.run(store);

      expect(out, `prefix ${k}`).toEqual(first);
      const expectedTools = original.executed.filter((p) => !covered(`${p}/result`, prefix)).sort();
      expect(replay.executed.sort(), `tools re-run from prefix ${k}`).toEqual(expectedTools);
      expect(replay.requests.length, `model requests from prefix ${k}`).toBe(modelKeys.filter((m) => !covered(m, prefix)).length);
      // The journal ends with the original's keys and values; only a random id
      // that was not yet recorded is (rightly) drawn anew.
      expect([...store.entries.keys()].sort()).toEqual([...full.entries.keys()].sort());
      for (const [key, value] of full.entries) {
        if (!/\/random:\d+$/.test(key) || prefix.has(key)) expect(store.entries.get(key), key).toEqual(value);
      }
    }
  });

  it("replaying a finished journal makes no model request, runs no tool and reads no clock", async () => {
    const original = setup();
    const store = new MemoryJournalStore();
    const first = await original.run(store);
    const again = setup();
    expect(await again.run(store)).toEqual(first);
    expect(again.executed).toEqual([]);
    expect(again.requests).toEqual([]);
    expect(again.clockReads()).toBe(0);
    expect(original.clockReads()).toBe(1);
  });
});
