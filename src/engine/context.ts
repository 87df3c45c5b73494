import { workerFiles, type WorkerFiles } from "./attachments/worker-files";
import type { CallFrame } from "./call-frame";
import { checkWorker, type CatalogWorker } from "./catalog";
import { ToolError } from "./errors";
import { idempotencyKey } from "./idempotency-key";
import { askModel } from "./model-step";
import { recordedCall } from "./toolsets/wrappers/journaled";
import type { RunServices } from "./run";
import type { JSONSchema } from "./json-schema";
import type { StateKV, Toolset } from "./toolsets/toolset";
import type { UsageMeter } from "./usage";
import { DEFAULT_INPUT, DEFAULT_MAX_TURNS, parseInstanceSpec, type InstanceSpec } from "./worker-file";

export interface AgentOptions {
  instructions: string;
  /** Same shape as a worker file's `toolsets` (instances only). */
  toolsets?: Record<string, { use: string; scope?: "call" | "run" | "global"; readonly?: boolean; [config: string]: unknown }>;
  input: unknown;
  model?: string;
  output?: JSONSchema;
  max_turns?: number;
}

/**
 * What every tool implementation receives. Each effect method is journaled under
 * `<callPath>/<kind>:<n>`, `n` counting this context's effects in call order, so a
 * deterministic tool replays onto the same keys. Copy one with `contextWith`, not a
 * spread: the engine's contexts keep `idempotencyKey` as a getter on their prototype.
 */
export interface ToolContext {
  readonly runId: string;
  readonly callPath: string;
  /** Stable for this tool call across replays (run id + call path); for `Idempotency-Key` headers. */
  readonly idempotencyKey: string;
  /** 1 for the run's worker, +1 per nested worker. */
  readonly depth: number;
  readonly workerChain: readonly string[];
  /** This tool call's usage; nested model calls add here and roll up to the run. */
  readonly usage: UsageMeter;
  /** Durable KV of this toolset instance's scope. */
  readonly state: StateKV;
  /** The calling worker's own `files` instances by reference (`docs:/a.png`): where http's `save_to` writes. Absent for global instances. */
  readonly files?: WorkerFiles;
  llmAsk(prompt: string, opts?: { model?: string; system?: string }): Promise<string>;
  llmAgent(opts: AgentOptions): Promise<unknown>;
  /** Any tool or worker tool the calling worker can see, by its exposed name. */
  callTool(name: string, args: unknown): Promise<unknown>;
  /** Any worker or function of the catalog, by name, one level deeper. */
  callWorker(name: string, input: unknown): Promise<unknown>;
  /** Memoizes a side effect under `key` (unique within this tool call). */
  step<T>(key: string, fn: () => T | Promise<T>): Promise<T>;
  now(): Promise<number>;
  randomId(): Promise<string>;
}

export function toolContext(run: RunServices, frame: CallFrame, toolset: Toolset, callPath: string, usage: UsageMeter, state: StateKV): ToolContext {
  return new CallContext(run, frame, toolset, callPath, usage, state);
}

/**
 * One tool call's context. A class so the idempotency key can be a getter on its
 * prototype: hashed when a tool reads it, not for every call (almost no tool does),
 * and still there on a copy made by `contextWith`.
 */
class CallContext implements ToolContext {
  readonly runId: string;
  readonly depth: number;
  readonly workerChain: readonly string[];
  readonly files: WorkerFiles;
  readonly llmAsk: ToolContext["llmAsk"];
  readonly llmAgent: ToolContext["llmAgent"];
  readonly callTool: ToolContext["callTool"];
  readonly callWorker: ToolContext["callWorker"];
  readonly step: ToolContext["step"];
  readonly now: ToolContext["now"];
  readonly randomId: ToolContext["randomId"];

  constructor(run: RunServices, frame: CallFrame, toolset: Toolset, readonly callPath: string, readonly usage: UsageMeter, readonly state: StateKV) {
    let n = 0;
    const next = (kind: string) => `${callPath}/${kind}:${++n}`;
    this.runId = run.runId;
    this.depth = frame.depth;
    this.workerChain = frame.chain;
    this.files = workerFiles(run, frame);
    this.llmAsk = (prompt, opts = {}) => askModel(run, frame, next("ask"), usage, prompt, opts);
    this.llmAgent = async (opts) => {
      const base = next("agent");
      const agent = run.callables.worker(adHocWorker(run, frame, opts));
      const meter = usage.child();
      return recordedCall(run.journal, `${base}/result`, meter, () =>
        agent.call(typeof opts.input === "string" ? { input: opts.input } : opts.input, { path: base, parent: frame, usage: meter, model: opts.model }),
      );
    };
    this.callTool = async (name, args) => toolset.callTool(name, args, toolContext(run, frame, toolset, next("call"), usage.child(), state));
    this.callWorker = async (name, input) => {
      const base = next("worker");
      const callee = run.callables.get(name);
      if (!callee) throw new ToolError(`unknown worker "${name}"; known: ${run.callables.names().join(", ")}`);
      const meter = usage.child();
      return recordedCall(run.journal, `${base}/result`, meter, () => callee.call(input, { path: `${base}/${name}`, parent: frame, usage: meter }));
    };
    this.step = (key, fn) => run.journal.step(`${callPath}/step:${key}`, fn);
    this.now = () => run.journal.step(next("now"), () => run.clock.now());
    this.randomId = () => run.journal.step(next("random"), () => crypto.randomUUID());
  }

  get idempotencyKey(): string {
    return idempotencyKey(this.runId, this.callPath);
  }
}

/** `llmAgent` options as a worker, checked like a worker file (kinds, configs). */
function adHocWorker(run: RunServices, frame: CallFrame, opts: AgentOptions): CatalogWorker {
  const file = `llmAgent in ${frame.worker.file}`;
  const toolsets: Record<string, InstanceSpec> = {};
  for (const [name, raw] of Object.entries(opts.toolsets ?? {})) {
    const spec = parseInstanceSpec(file, `toolsets.${name}`, raw);
    if (Array.isArray(spec)) throw new ToolError(spec.map((e) => e.message).join("; "));
    toolsets[name] = spec;
  }
  const worker: CatalogWorker = {
    file,
    name: "agent",
    instructions: opts.instructions,
    input: DEFAULT_INPUT,
    output: opts.output,
    maxTurns: opts.max_turns ?? DEFAULT_MAX_TURNS,
    toolsets,
    workers: [],
    workerTools: [],
    approval: {},
  };
  if (typeof opts.input !== "string") worker.input = { type: "object" };
  const problems = checkWorker(worker, run.catalog.kinds);
  if (problems.length) throw new ToolError(problems.map((p) => p.message).join("; "));
  return worker;
}
