import type { CallNode } from "../../src/engine/journal/call-tree";
import type { RunView } from "../../src/runs/types";
import { z } from "zod";
import {
  defineToolset,
  executeRun,
  files,
  http,
  inProcessGlobals,
  loadCatalog,
  MemoryJournalStore,
  MemoryStateBackend,
  modelResolver,
  tool,
  toolsetRegistry,
  type CodeFunction,
  type EngineConfig,
  type Model,
  type RunRequest,
  type ToolsetKind,
} from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import type { OpenAIOptions } from "../../src/engine/model/openai";
import type { PriceTable } from "../../src/engine/types/usage";

/** A worker file from frontmatter lines and instructions. */
export const workerFile = (frontmatter: string, instructions = "Do the task.") => `---\n${frontmatter.trim()}\n---\n${instructions}\n`;

/** Counters with in-memory state: each instance starts at 0; creation and close are logged. */
export function counterKind() {
  const log = { created: [] as string[], closed: [] as string[], values: [] as number[] };
  let seq = 0;
  type Counter = { id: string; n: number; failClose: boolean };
  const kind = defineToolset({
    kind: "counter",
    config: z.strictObject({ fail_close: z.boolean().default(false) }),
    create: (config, init): Counter => {
      const id = `${init.name}#${++seq}`;
      log.created.push(id);
      return { id, n: 0, failClose: config.fail_close };
    },
    close: (self) => {
      log.closed.push(self.id);
      if (self.failClose) throw new Error(`close of ${self.id} failed`);
    },
    tools: {
      increment: tool({
        description: "Add one and return the new value",
        input: z.strictObject({}),
        readOnly: true,
        run: (_args, _ctx, self: Counter) => {
          self.n += 1;
          log.values.push(self.n);
          return self.n;
        },
      }),
    },
  });
  return { kind, log };
}

export interface Harness {
  config: EngineConfig;
  run(req: Partial<RunRequest> & { worker: string; input: unknown }, store?: MemoryJournalStore): ReturnType<typeof executeRun>;
}

/** An engine over a catalog made of the given files, with in-memory ports. */
export function harness(
  filesByName: Record<string, string>,
  opts: {
    kinds?: ToolsetKind[];
    models?: Record<string, Model>;
    maxDepth?: number;
    defaultModel?: string;
    prices?: PriceTable;
    openai?: OpenAIOptions;
    functions?: CodeFunction[];
  } = {},
): Harness {
  const catalog = loadCatalog(filesByName, toolsetRegistry(files, http, ...(opts.kinds ?? [])), parseYaml, undefined, opts.functions);
  const states = new MemoryStateBackend();
  const config: EngineConfig = {
    catalog,
    models: modelResolver({ extra: opts.models, openai: opts.openai }),
    states,
    globals: inProcessGlobals(states),
    maxDepth: opts.maxDepth,
    prices: opts.prices,
    defaultModel: opts.defaultModel ?? "test:tools",
    log: { warn: (m, d) => warnings.push(`${m} ${JSON.stringify(d ?? {})}`) },
  };
  let n = 0;
  return {
    config,
    run: (req, store = new MemoryJournalStore()) => executeRun(config, store, { runId: `run-${++n}`, ...req }),
  };
}

/** Warnings the engine logged (e.g. failing `close()`), across harnesses. */
export const warnings: string[] = [];

/** Loads a script into the fake OpenAI-compatible server; returns its base URL and a reader of what it was asked. */
export async function fakeOpenAI(baseUrl: string, id: string, replies: unknown[]) {
  const res = await fetch(`${baseUrl}/scripts/${id}`, { method: "PUT", body: JSON.stringify(replies) });
  if (!res.ok) throw new Error(`fake server refused the script: ${res.status}`);
  return {
    baseURL: `${baseUrl}/scripts/${id}/v1`,
    requests: async () => ((await (await fetch(`${baseUrl}/scripts/${id}`)).json()) as { requests: any[] }).requests,
  };
}

/** A `desk` run's view for rendering its pages in engine tests: the call tree from a journal, the rest plain; `fields` override. */
export const deskRunView = (tree: CallNode | null, fields: Partial<RunView> = {}): RunView =>
  ({
    id: "r",
    worker: "desk",
    status: "succeeded",
    input: {},
    output: null,
    error: null,
    usage: null,
    approvals: [],
    waits: [],
    call_tree: tree,
    trigger: { kind: "api" },
    created_at: 1,
    updated_at: 1,
    forked_from: null,
    parent: null,
    children: [],
    compactions: [],
    timeline: { start: 1, end: 1, spans: [], omitted: 0, totals: { model_ms: 0, tool_ms: 0, paused_ms: 0, wall_ms: 0 } },
    messages: [],
    attributes: {},
    ...fields,
  }) as unknown as RunView;

/** A `post` tool that asks for approval (its default: not read-only) and counts what it posted. */
export function poster() {
  const posted: string[] = [];
  const kind = defineToolset({
    kind: "poster",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      post: tool({ description: "Posts (asks first)", input: z.strictObject({ text: z.string() }), run: ({ text }) => (posted.push(text), `posted ${text}`) }),
    },
  });
  return { kind, posted };
}
