// Engine overhead: one workload — a 10-turn run, 3 tool calls per turn, trivial
// tools, a zero-latency scripted model — through edgework's engine, the OpenAI
// Agents SDK's run loop and the AI SDK's tool loop, interleaved in one process.
import { Agent, Runner, setTracingDisabled, tool as agentsTool, Usage as AgentsUsage, type Model as AgentsModel } from "@openai/agents";
import { generateText, stepCountIs, tool as aiTool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { defineToolset, executeRun, loadCatalog, MemoryJournalStore, MemoryStateBackend, modelResolver, scriptedModel, tool, toolsetRegistry } from "../src/engine";
import { parseYaml } from "../src/build/yaml";

export const TURNS = 10;
export const TOOLS_PER_TURN = 3;
const TOOL_NAMES = ["alpha", "beta", "gamma"];
const noop = async ({ n }: { n: number }) => `ok ${n}`;
const args = (turn: number, i: number) => JSON.stringify({ n: turn * 10 + i });

/** edgework: executeRun on the in-memory journal, as the engine tests use it. */
function edgework() {
  const trivial = defineToolset({
    kind: "trivial",
    config: z.strictObject({}),
    create: () => ({}),
    tools: Object.fromEntries(TOOL_NAMES.map((name) => [name, tool({ description: `${name} tool`, input: z.strictObject({ n: z.number() }), readOnly: true, run: noop })])),
  });
  const catalog = loadCatalog({ "bench.worker": "---\nname: bench\nmodel: test:bench\nmax_turns: 20\ntoolsets:\n  trivial: { use: trivial }\n---\nBenchmark.\n" }, toolsetRegistry(trivial), parseYaml);
  return async () => {
    const model = scriptedModel((_req, n) =>
      n < TURNS ? { toolCalls: TOOL_NAMES.map((name, i) => ({ id: `c${n}_${i}`, name, arguments: args(n, i) })), usage: { inputTokens: 10, outputTokens: 5 } } : { text: "done", usage: { inputTokens: 10, outputTokens: 5 } },
    );
    const states = new MemoryStateBackend();
    const out = await executeRun({ catalog, models: modelResolver({ extra: { "test:bench": model } }), states }, new MemoryJournalStore(), { runId: "bench", worker: "bench", input: { input: "go" } });
    if (out.status !== "succeeded") throw new Error(`edgework run ${out.status}`);
  };
}

/** OpenAI Agents JS: Runner.run with a scripted Model. */
function openaiAgents() {
  setTracingDisabled(true);
  const tools = TOOL_NAMES.map((name) => agentsTool({ name, description: `${name} tool`, parameters: z.object({ n: z.number() }), execute: noop }));
  return async () => {
    let n = 0;
    const model: AgentsModel = {
      async getResponse() {
        const turn = n++;
        const usage = new AgentsUsage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
        if (turn < TURNS) {
          return { usage, output: TOOL_NAMES.map((name, i) => ({ type: "function_call" as const, callId: `c${turn}_${i}`, name, arguments: args(turn, i), status: "completed" as const })) };
        }
        return { usage, output: [{ type: "message" as const, role: "assistant" as const, status: "completed" as const, content: [{ type: "output_text" as const, text: "done" }] }] };
      },
      getStreamedResponse() {
        throw new Error("not used");
      },
    };
    const agent = new Agent({ name: "bench", instructions: "Benchmark.", model, tools });
    const result = await new Runner({ tracingDisabled: true }).run(agent, "go", { maxTurns: 20 });
    if (result.finalOutput !== "done") throw new Error("agents run did not finish");
  };
}

/** AI SDK: generateText with tools and MockLanguageModelV3. */
function aiSdk() {
  const tools = Object.fromEntries(TOOL_NAMES.map((name) => [name, aiTool({ description: `${name} tool`, inputSchema: z.object({ n: z.number() }), execute: noop })]));
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  return async () => {
    let n = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const turn = n++;
        if (turn < TURNS) {
          return {
            content: TOOL_NAMES.map((name, i) => ({ type: "tool-call" as const, toolCallId: `c${turn}_${i}`, toolName: name, input: args(turn, i) })),
            finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
            usage,
            warnings: [],
          };
        }
        return { content: [{ type: "text" as const, text: "done" }], finishReason: { unified: "stop" as const, raw: "stop" }, usage, warnings: [] };
      },
    });
    const result = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(TURNS + 1) });
    if (result.text !== "done") throw new Error("ai sdk run did not finish");
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface OverheadResult {
  name: string;
  medianMsPerTurn: number;
  p90MsPerTurn: number;
  runs: number;
}

/** Runs each implementation `reps` times (after warm-up), interleaved, and reports ms per turn. */
export async function engineOverhead(reps = 300, warmup = 50): Promise<OverheadResult[]> {
  const impls = [
    { name: "edgework", run: edgework() },
    { name: "@openai/agents", run: openaiAgents() },
    { name: "ai (AI SDK)", run: aiSdk() },
  ];
  const times = new Map<string, number[]>(impls.map((i) => [i.name, []]));
  for (let r = 0; r < warmup + reps; r++) {
    // Rotate the order every repetition so no implementation always runs first.
    for (let k = 0; k < impls.length; k++) {
      const impl = impls[(r + k) % impls.length]!;
      const t0 = performance.now();
      await impl.run();
      const dt = performance.now() - t0;
      if (r >= warmup) times.get(impl.name)!.push(dt / TURNS);
    }
  }
  return impls.map(({ name }) => {
    const xs = times.get(name)!;
    const sorted = [...xs].sort((a, b) => a - b);
    return { name, medianMsPerTurn: median(xs), p90MsPerTurn: sorted[Math.floor(sorted.length * 0.9)]!, runs: xs.length };
  });
}
