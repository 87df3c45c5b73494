import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, executeRun, isPaused, MemoryJournalStore, RunInterrupted, scriptedModel, tool, type JournalStore, type Model } from "../../src/engine";
import type { BeforeStep } from "../../src/engine/journal/journal";
import { MAX_CONTENT_CHARS, MAX_NAME_CHARS, StepTracer } from "../../src/engine/trace/step-tracer";
import type { TraceSpan } from "../../src/engine/trace/span";
import { harness, workerFile } from "./helpers";

const TOKEN = "tok-en/secret-ä-1234";

/** An upstream stand-in: returns, and fails quoting, the header it was configured with; `big` returns 10 000 characters. */
const leaky = defineToolset({
  kind: "leaky",
  config: z.strictObject({ header: z.string() }),
  create: (c) => c,
  tools: {
    echo: tool({ description: "echoes", input: z.strictObject({}), readOnly: true, run: (_a, _ctx, c: { header: string }) => ({ sent: c.header }) }),
    fail: tool({
      description: "fails",
      input: z.strictObject({}),
      readOnly: true,
      run: (_a, _ctx, c: { header: string }) => {
        throw new Error(`401 for ${c.header}`);
      },
    }),
    big: tool({ description: "big", input: z.strictObject({}), readOnly: true, run: () => "x".repeat(10_000) }),
  },
});

/**
 * Two turns; the model gives every call of the first turn the same id (its ids are data,
 * never a span's identity). One per run: its count of requests spans the run's activations.
 */
const runModel = () =>
  scriptedModel((_req, n) =>
    n === 0 ? { toolCalls: ["echo", "fail", "big"].map((name) => ({ id: "same", name: `up_${name}`, args: {} })) } : { text: "done" },
  );

const file = workerFile(`name: w\nmodel: test:m\ntoolsets:\n  up: { use: leaky, header: "Bearer \${TOKEN}" }`);

/** One activation traced: the spans it made (and the root's if the run ended). */
async function activation(store: JournalStore, model: Model, captureContent: boolean, stopAt?: number): Promise<{ status: string; spans: TraceSpan[] }> {
  const h = harness({ "w.worker": file }, { kinds: [leaky], models: { "test:m": model } });
  const tracer = new StepTracer({ runId: "r1", worker: "w", keyGrammar: 2, captureContent, clock: Date });
  const stop: BeforeStep = (_key, journal) => {
    if (stopAt !== undefined && journal.size >= stopAt) throw new RunInterrupted("fault");
  };
  try {
    const out = await executeRun({ ...h.config, vars: { TOKEN }, beforeStep: tracer.beforeStep(stop) }, tracer.observe(store), {
      runId: "r1",
      worker: "w",
      input: { input: "x" },
    });
    if (!isPaused(out)) tracer.runEnded(0, out);
    return { status: out.status, spans: tracer.drain() };
  } catch (err) {
    if (!(err instanceof RunInterrupted)) throw err;
    return { status: "interrupted", spans: tracer.drain() };
  }
}

const attr = (spans: TraceSpan[], path: string, key: string) => spans.find((s) => s.path === path)?.attributes[key];

describe("StepTracer", () => {
  it("an interrupted run and its replay make each span once: 2 model requests, 3 tool calls, the run", async () => {
    const store = new MemoryJournalStore();
    const model = runModel();
    const first = await activation(store, model, false, 3);
    expect(first.status).toBe("interrupted");
    const second = await activation(store, model, false);
    expect(second.status).toBe("succeeded");
    const paths = [...first.spans, ...second.spans].map((s) => s.path);
    expect(paths.sort()).toEqual(["w", "w/turn:1/model", "w/turn:1/tool:1", "w/turn:1/tool:2", "w/turn:1/tool:3", "w/turn:2/model"]);
    expect(first.spans.length).toBeGreaterThan(0);
    // The model's ids are data: three calls with one id are three spans, each with that id.
    const tools = [...first.spans, ...second.spans].filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(tools.map((s) => [s.attributes["gen_ai.tool.name"], s.attributes["gen_ai.tool.call.id"], s.parent])).toEqual(
      expect.arrayContaining([
        ["up_echo", "same", "w"],
        ["up_fail", "same", "w"],
        ["up_big", "same", "w"],
      ]),
    );
    expect(tools.find((s) => s.attributes["gen_ai.tool.name"] === "up_fail")!.error).toEqual({});
    // A third pass over a complete journal records nothing: no span but the run's own.
    expect((await activation(store, model, false)).spans.map((s) => s.path)).toEqual(["w"]);
  });

  it("content only when asked, as the journal holds it: a configured secret never appears, each value cut to the bound", async () => {
    const plain = await activation(new MemoryJournalStore(), runModel(), false);
    expect(JSON.stringify(plain.spans)).not.toContain("Bearer");
    const { spans } = await activation(new MemoryJournalStore(), runModel(), true);
    const text = JSON.stringify(spans);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(encodeURIComponent(TOKEN));
    expect(JSON.parse(attr(spans, "w/turn:1/tool:1", "gen_ai.tool.call.result") as string)).toEqual({ sent: "Bearer [redacted:TOKEN]" });
    expect(spans.find((s) => s.path === "w/turn:1/tool:2")!.error).toEqual({ message: "401 for Bearer [redacted:TOKEN]" });
    expect((attr(spans, "w/turn:1/tool:3", "gen_ai.tool.call.result") as string).length).toBe(MAX_CONTENT_CHARS + 1);
    expect(attr(spans, "w/turn:2/model", "gen_ai.output.messages")).toBe(JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "done" }] }]));
  });

  it("a call id the model made up, 50 000 characters, is cut to the bound in the span; an unknown tool it named makes no span", async () => {
    const huge = "n".repeat(50_000);
    const model = scriptedModel((_req, n) =>
      n === 0
        ? {
            toolCalls: [
              { id: huge, name: "up_echo", args: {} },
              { id: "x", name: huge, args: {} },
            ],
          }
        : { text: "done" },
    );
    const { spans } = await activation(new MemoryJournalStore(), model, false);
    expect(spans.find((s) => s.path === "w/turn:1/tool:1")!.attributes["gen_ai.tool.call.id"]).toBe(`${"n".repeat(MAX_NAME_CHARS)}…`);
    expect(spans.map((s) => s.path).sort()).toEqual(["w", "w/turn:1/model", "w/turn:1/tool:1", "w/turn:2/model"]);
    expect(JSON.stringify(spans).length).toBeLessThan(5_000);
  });
});
