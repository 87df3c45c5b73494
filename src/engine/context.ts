import { workerFiles, type WorkerFiles } from "./attachments/worker-files";
import type { CallFrame } from "./call-frame";
import { checkWorker, type CatalogWorker } from "./catalog";
import { ToolError } from "./errors";
import { idempotencyKey } from "./idempotency-key";
import { calleePath, effectKey, resultKey, stepKey, type EffectKind } from "./journal/keys";
import { askModel } from "./model-step";
import { recordedCall } from "./toolsets/wrappers/journaled";
import type { RunServices } from "./run";
import { BOUNDARY, EFFECT_METHODS, guarded, type Effect, type SignalBoundary } from "./signal-boundary";
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
 * `<callPath>/<kind>:<n>` (journal/keys.ts), `n` counting this context's effects in call order, so a
 * deterministic tool replays onto the same keys. Copy one with `contextWith`, not a
 * spread: the engine's contexts keep `idempotencyKey` and the methods as getters on
 * their prototype (each made when first read).
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

/** What a context's effect methods act on: shared by a context and its `contextWith` copies, the effect counter too. */
interface CallCore {
  readonly run: RunServices;
  readonly frame: CallFrame;
  readonly toolset: Toolset;
  readonly callPath: string;
  readonly usage: UsageMeter;
  readonly state: StateKV;
  /** Effects so far: `n` of the next `<kind>:<n>` key. */
  n: number;
}

const CORE = Symbol("callCore");

const next = (core: CallCore, kind: EffectKind) => effectKey(core.callPath, kind, ++core.n);

type LazyMember = (typeof EFFECT_METHODS)[number] | "files";

/** Each member a context makes only when it is first read, from the call's core. */
const LAZY: { [K in LazyMember]: (core: CallCore) => ToolContext[K] } = {
  files: ({ run, frame }) => workerFiles(run, frame),
  llmAsk: (core) => (prompt, opts = {}) => askModel(core.run, core.frame, next(core, "ask"), core.usage, prompt, opts),
  llmAgent: (core) => async (opts) => {
    const { run, frame, usage } = core;
    const base = next(core, "agent");
    const agent = run.callables.worker(adHocWorker(run, frame, opts));
    const meter = usage.child();
    return recordedCall(
      run.journal,
      resultKey(base),
      meter,
      () => agent.call(typeof opts.input === "string" ? { input: opts.input } : opts.input, { path: base, parent: frame, usage: meter, model: opts.model }),
      "llmAgent",
    );
  },
  callTool: (core) => async (name, args) => core.toolset.callTool(name, args, toolContext(core.run, core.frame, core.toolset, next(core, "call"), core.usage.child(), core.state)),
  callWorker: (core) => async (name, input) => {
    const { run, frame, usage } = core;
    const base = next(core, "worker");
    const callee = run.callables.get(name);
    if (!callee) throw new ToolError(`unknown worker "${name}"; known: ${run.callables.names().join(", ")}`);
    const meter = usage.child();
    return recordedCall(run.journal, resultKey(base), meter, () => callee.call(input, { path: calleePath(base, name), parent: frame, usage: meter }), name);
  },
  step: ({ run, callPath }) => (key, fn) => run.journal.step(stepKey(run.keyGrammar, callPath, key), fn),
  now: (core) => () => core.run.journal.step(next(core, "now"), () => core.run.clock.now()),
  randomId: (core) => () => core.run.journal.step(next(core, "random"), () => crypto.randomUUID()),
};

/**
 * One tool call's context. A class so what most tools never touch costs nothing until
 * read: the idempotency key is hashed, and each LAZY member made, on first access
 * (then kept on the instance, so `const { step } = ctx` works unbound). The methods act
 * on the call's core — the context's original members, as when they were closures made
 * up front — also on a `contextWith` copy, which shares the core and its effect counter.
 */
class CallContext implements ToolContext {
  readonly runId: string;
  readonly depth: number;
  readonly workerChain: readonly string[];
  readonly [CORE]: CallCore;
  /** Set on a copy handed to user code (`boundContext`): its effect methods made later report signals there. */
  declare [BOUNDARY]?: SignalBoundary;
  // Accessors on the prototype (below), not fields: a field would be made for every call.
  declare readonly files: WorkerFiles;
  declare readonly llmAsk: ToolContext["llmAsk"];
  declare readonly llmAgent: ToolContext["llmAgent"];
  declare readonly callTool: ToolContext["callTool"];
  declare readonly callWorker: ToolContext["callWorker"];
  declare readonly step: ToolContext["step"];
  declare readonly now: ToolContext["now"];
  declare readonly randomId: ToolContext["randomId"];

  constructor(run: RunServices, frame: CallFrame, toolset: Toolset, readonly callPath: string, readonly usage: UsageMeter, readonly state: StateKV) {
    this.runId = run.runId;
    this.depth = frame.depth;
    this.workerChain = frame.chain;
    this[CORE] = { run, frame, toolset, callPath, usage, state, n: 0 };
  }

  get idempotencyKey(): string {
    return idempotencyKey(this.runId, this.callPath);
  }
}

// Read: made from the core (guarded on a bound copy) and kept on the instance. Assigned (`contextWith`, a wrapper): kept as given.
for (const name of Object.keys(LAZY) as LazyMember[]) {
  const make = LAZY[name] as (core: CallCore) => unknown;
  Object.defineProperty(CallContext.prototype, name, {
    get(this: CallContext) {
      const made = make(this[CORE]);
      const boundary = this[BOUNDARY];
      return own(this, name, boundary && name !== "files" ? guarded(boundary, made as Effect) : made);
    },
    set(this: CallContext, value: unknown) {
      own(this, name, value);
    },
    configurable: true,
  });
}

/** Sets `key` as a plain own member of `ctx` (as `contextWith` and an assignment expect), hiding the prototype's accessor. */
function own<T>(ctx: ToolContext, key: keyof ToolContext, value: T): T {
  Object.defineProperty(ctx, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
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
