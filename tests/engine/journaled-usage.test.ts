import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, executeRun, MemoryJournalStore, scriptedModel, tool } from "../../src/engine";
import { harness, workerFile } from "./helpers";

const kind = defineToolset({
  kind: "probe",
  config: z.strictObject({}),
  create: () => ({}),
  tools: {
    plain: tool({ description: "Spends nothing", input: z.strictObject({}), readOnly: true, run: () => "plain" }),
    asker: tool({ description: "Asks the model", input: z.strictObject({}), readOnly: true, run: (_a, ctx) => ctx.llmAsk("2+2?") }),
  },
});

describe("a journaled tool call's usage", () => {
  it("is recorded only for a call that spent something, and replay re-adds it without asking again", async () => {
    const model = scriptedModel((req) => {
      if (!req.tools.length) return { text: "4", usage: { inputTokens: 7, outputTokens: 3 } };
      const answered = req.messages.some((m) => m.role === "tool");
      return answered
        ? { text: "done", usage: { inputTokens: 1, outputTokens: 1 } }
        : {
            toolCalls: [
              { name: "plain", id: "p" },
              { name: "asker", id: "a" },
            ],
            usage: { inputTokens: 1, outputTokens: 1 },
          };
    });
    const h = harness(
      { "w.worker": workerFile("name: w\nmodel: test:probe\ntoolsets:\n  probe: { use: probe }") },
      { kinds: [kind], models: { "test:probe": model } },
    );
    const store = new MemoryJournalStore();
    const first = await executeRun(h.config, store, { runId: "usage-1", worker: "w", input: { input: "go" } });
    expect(first).toMatchObject({ status: "succeeded", output: "done", usage: { requests: 3, inputTokens: 9, outputTokens: 5 } });
    expect(store.entries.get("w/turn:1/tool:1/result")).toEqual({ ok: true, value: "plain", name: "plain", fp: expect.any(Number) });
    expect(store.entries.get("w/turn:1/tool:2/result")).toEqual({
      ok: true,
      value: "4",
      name: "asker",
      fp: expect.any(Number),
      usage: { requests: 1, inputTokens: 7, outputTokens: 3, costUsd: 0 },
    });

    const requests = model.requests;
    const replayed = await executeRun(h.config, store, { runId: "usage-1", worker: "w", input: { input: "go" } });
    expect(replayed).toEqual(first);
    expect(model.requests).toBe(requests);
  });
});
