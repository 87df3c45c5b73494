// Engine overhead: one workload — an N-turn run (10 and 50), 3 tool calls per turn,
// trivial tools, a zero-latency scripted model — through edgework's engine, the
// OpenAI Agents SDK's run loop, the AI SDK's tool loop and a bare hand-written loop
// (the floor), interleaved in one process.
import { Agent, Runner, setTracingDisabled, tool as agentsTool, Usage as AgentsUsage, type Model as AgentsModel } from "@openai/agents";
import { generateText, stepCountIs, tool as aiTool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import {
  defineToolset,
  executeRun,
  loadCatalog,
  MemoryJournalStore,
  MemoryStateBackend,
  modelResolver,
  scriptedModel,
  tool,
  toolsetRegistry,
} from "../src/engine";
import { parseYaml } from "../src/build/yaml";

export const TURN_COUNTS = [10, 50] as const;
export const TOOLS_PER_TURN = 3;
const TOOL_NAMES = ["alpha", "beta", "gamma"];
const noop = async ({ n }: { n: number }) => `ok ${n}`;
const args = (turn: number, i: number) => JSON.stringify({ n: turn * 10 + i });

/** The floor: the same loop by hand — messages, JSON.parse and zod for every call, no journal. */
export function bare(TURNS: number) {
  const schema = z.object({ n: z.number() });
  const tools = new Map(TOOL_NAMES.map((name) => [name, { description: `${name} tool`, schema, run: noop }]));
  type Call = { id: string; name: string; arguments: string };
  type Msg = { role: string; content: string | null; toolCalls?: Call[]; toolCallId?: string };
  return async () => {
    let n = 0;
    const model = async (_messages: Msg[]): Promise<{ text: string | null; toolCalls: Call[] }> => {
      const turn = n++;
      return turn < TURNS
        ? { text: null, toolCalls: TOOL_NAMES.map((name, i) => ({ id: `c${turn}_${i}`, name, arguments: args(turn, i) })) }
        : { text: "done", toolCalls: [] };
    };
    const messages: Msg[] = [
      { role: "system", content: "Benchmark." },
      { role: "user", content: "go" },
    ];
    let output: string | null = null;
    for (let turn = 0; turn <= TURNS && output === null; turn++) {
      const res = await model(messages);
      messages.push({ role: "assistant", content: res.text, toolCalls: res.toolCalls });
      if (!res.toolCalls.length) output = res.text;
      const results = await Promise.all(
        res.toolCalls.map(async (call) => {
          const t = tools.get(call.name);
          if (!t) return `Error: unknown tool ${call.name}`;
          const parsed = t.schema.safeParse(JSON.parse(call.arguments));
          return parsed.success ? await t.run(parsed.data) : `Error: ${parsed.error.message}`;
        }),
      );
      res.toolCalls.forEach((c, i) => {
        messages.push({ role: "tool", toolCallId: c.id, content: results[i]! });
      });
    }
    if (output !== "done") throw new Error("bare loop did not finish");
  };
}

/** edgework: executeRun on the in-memory journal, as the engine tests use it (also profiled: bench/profile-engine.mjs). */
export function edgework(TURNS: number) {
  const trivial = defineToolset({
    kind: "trivial",
    config: z.strictObject({}),
    create: () => ({}),
    tools: Object.fromEntries(
      TOOL_NAMES.map((name) => [name, tool({ description: `${name} tool`, input: z.strictObject({ n: z.number() }), readOnly: true, run: noop })]),
    ),
  });
  const catalog = loadCatalog(
    { "bench.worker": "---\nname: bench\nmodel: test:bench\nmax_turns: 60\ntoolsets:\n  trivial: { use: trivial }\n---\nBenchmark.\n" },
    toolsetRegistry(trivial),
    parseYaml,
  );
  return async () => {
    const model = scriptedModel((_req, n) =>
      n < TURNS
        ? { toolCalls: TOOL_NAMES.map((name, i) => ({ id: `c${n}_${i}`, name, arguments: args(n, i) })), usage: { inputTokens: 10, outputTokens: 5 } }
        : { text: "done", usage: { inputTokens: 10, outputTokens: 5 } },
    );
    const states = new MemoryStateBackend();
    const out = await executeRun({ catalog, models: modelResolver({ extra: { "test:bench": model } }), states }, new MemoryJournalStore(), {
      runId: "bench",
      worker: "bench",
      input: { input: "go" },
    });
    if (out.status !== "succeeded") throw new Error(`edgework run ${out.status}`);
  };
}

/** OpenAI Agents JS: Runner.run with a scripted Model. */
function openaiAgents(TURNS: number) {
  setTracingDisabled(true);
  const tools = TOOL_NAMES.map((name) => agentsTool({ name, description: `${name} tool`, parameters: z.object({ n: z.number() }), execute: noop }));
  return async () => {
    let n = 0;
    const model: AgentsModel = {
      async getResponse() {
        const turn = n++;
        const usage = new AgentsUsage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
        if (turn < TURNS) {
          return {
            usage,
            output: TOOL_NAMES.map((name, i) => ({
              type: "function_call" as const,
              callId: `c${turn}_${i}`,
              name,
              arguments: args(turn, i),
              status: "completed" as const,
            })),
          };
        }
        return {
          usage,
          output: [
            { type: "message" as const, role: "assistant" as const, status: "completed" as const, content: [{ type: "output_text" as const, text: "done" }] },
          ],
        };
      },
      getStreamedResponse() {
        throw new Error("not used");
      },
    };
    const agent = new Agent({ name: "bench", instructions: "Benchmark.", model, tools });
    const result = await new Runner({ tracingDisabled: true }).run(agent, "go", { maxTurns: TURNS + 5 });
    if (result.finalOutput !== "done") throw new Error("agents run did not finish");
  };
}

/** AI SDK: generateText with tools and MockLanguageModelV3. */
function aiSdk(TURNS: number) {
  const tools = Object.fromEntries(
    TOOL_NAMES.map((name) => [name, aiTool({ description: `${name} tool`, inputSchema: z.object({ n: z.number() }), execute: noop })]),
  );
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
  turns: number;
  medianMsPerTurn: number;
  p90MsPerTurn: number;
  runs: number;
}

export const BARE = "bare loop (floor)";
export const EDGEWORK = "edgework";
export const AI_SDK = "ai (AI SDK)";

/**
 * Runs each implementation at each run length `reps` times (after warm-up),
 * interleaved, and reports ms per turn. Runs of `turns` turns get
 * `reps * 10 / turns` repetitions (at least 60), so each length costs about the same.
 */
export async function engineOverhead(reps = 300, warmup = 50): Promise<OverheadResult[]> {
  const all: OverheadResult[] = [];
  for (const turns of TURN_COUNTS) {
    const scale = TURN_COUNTS[0] / turns;
    const n = Math.max(60, Math.round(reps * scale));
    const w = Math.max(10, Math.round(warmup * scale));
    const impls = [
      { name: EDGEWORK, run: edgework(turns) },
      { name: "@openai/agents", run: openaiAgents(turns) },
      { name: AI_SDK, run: aiSdk(turns) },
      { name: BARE, run: bare(turns) },
    ];
    const times = new Map<string, number[]>(impls.map((i) => [i.name, []]));
    for (let r = 0; r < w + n; r++) {
      // Rotate the order every repetition so no implementation always runs first.
      for (let k = 0; k < impls.length; k++) {
        const impl = impls[(r + k) % impls.length]!;
        const t0 = performance.now();
        await impl.run();
        const dt = performance.now() - t0;
        if (r >= w) times.get(impl.name)!.push(dt / turns);
      }
    }
    for (const { name } of impls) {
      const xs = times.get(name)!;
      const sorted = [...xs].sort((a, b) => a - b);
      all.push({ name, turns, medianMsPerTurn: median(xs), p90MsPerTurn: sorted[Math.floor(sorted.length * 0.9)]!, runs: xs.length });
    }
  }
  return all;
}
