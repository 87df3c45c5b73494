// What tracing adds to a run (docs/observability.md): the 10-turn run of
// engine-overhead.ts (3 tool calls a turn, zero-latency model) through the engine with
// and without the tracer on its journal, plus encoding the spans as the OTLP/HTTP JSON
// body the exporter sends; interleaved in one process, CPU time per run (median).
// The request itself leaves after the activation (waitUntil) and is not counted.
// Run by bench/trace-cost.mjs (`node bench/trace-cost.mjs`).
import { cpuUsage } from "node:process";
import { z } from "zod";
import { parseYaml } from "../src/build/yaml";
import { defineToolset, executeRun, loadCatalog, MemoryJournalStore, modelResolver, scriptedModel, tool, toolsetRegistry } from "../src/engine";
import { StepTracer } from "../src/engine/trace/step-tracer";
import { utf8Bytes } from "../src/engine/journal/bounds";
import { exportRequest, runIds, spanJson } from "../src/otel/otlp-json";

const TURNS = 10;
const NAMES = ["alpha", "beta", "gamma"];
const trivial = defineToolset({
  kind: "trivial",
  config: z.strictObject({}),
  create: () => ({}),
  tools: Object.fromEntries(
    NAMES.map((name) => [name, tool({ description: name, input: z.strictObject({ n: z.number() }), readOnly: true, run: async ({ n }) => `ok ${n}` })]),
  ),
});
const catalog = loadCatalog(
  { "bench.worker": "---\nname: bench\nmodel: test:bench\nmax_turns: 60\ntoolsets:\n  trivial: { use: trivial }\n---\nBenchmark.\n" },
  toolsetRegistry(trivial),
  parseYaml,
);

/** One run; traced: the tracer on its journal and the export body made. Returns the body's bytes. */
async function run(traced: boolean, captureContent: boolean): Promise<number> {
  const model = scriptedModel((_req, n) =>
    n < TURNS
      ? {
          toolCalls: NAMES.map((name, i) => ({ id: `c${n}_${i}`, name, arguments: JSON.stringify({ n: n * 10 + i }) })),
          usage: { inputTokens: 10, outputTokens: 5 },
        }
      : { text: "done", usage: { inputTokens: 10, outputTokens: 5 } },
  );
  const config = { catalog, models: modelResolver({ extra: { "test:bench": model } }) };
  const req = { runId: "bench-run", worker: "bench", input: { input: "go" } };
  if (!traced) {
    await executeRun(config, new MemoryJournalStore(), req);
    return 0;
  }
  const tracer = new StepTracer({ runId: req.runId, worker: "bench", keyGrammar: 2, captureContent, clock: Date });
  const out = await executeRun({ ...config, beforeStep: tracer.beforeStep() }, tracer.observe(new MemoryJournalStore()), req);
  if (out.status !== "succeeded") throw new Error(out.status);
  tracer.runEnded(0, out);
  const spans = tracer.drain();
  const ids = runIds(req.runId, spans);
  return utf8Bytes(
    exportRequest(
      "edgework",
      spans.map((s) => spanJson(ids, s)),
    ),
  );
}

async function cpuMs(fn: () => Promise<unknown>): Promise<number> {
  const start = cpuUsage();
  await fn();
  const used = cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** CPU milliseconds per run (median of `runs`, interleaved) untraced, traced, traced with content; the export body's bytes. */
export async function traceCost(runs: number) {
  const samples = { off: [] as number[], on: [] as number[], content: [] as number[] };
  const bytes = { on: 0, content: 0 };
  for (let i = 0; i < runs; i++) {
    samples.off.push(await cpuMs(() => run(false, false)));
    samples.on.push(await cpuMs(async () => (bytes.on = await run(true, false))));
    samples.content.push(await cpuMs(async () => (bytes.content = await run(true, true))));
  }
  const [off, on, content] = [median(samples.off), median(samples.on), median(samples.content)];
  return {
    turns: TURNS,
    spans: TURNS + 1 + TURNS * NAMES.length + 1,
    cpuMsPerRun: { off, on, content },
    addedCpuMs: { on: on - off, content: content - off },
    exportBytes: bytes,
  };
}
