import { workerFiles } from "../attachments/worker-files";
import { frameModels, type CallServices } from "./call-frame";
import { checkWorker } from "../catalog/catalog";
import { messageOf, propagates, RunError, ToolError, type PendingWait } from "../errors";
import { boundedWait, correlationKey, durationMs, eventName, MAX_REASON_CHARS, MAX_WAIT_MS, shownDuration } from "../waits/bounds";
import { awaitWait, eventWaitResult } from "../waits/wait";
import { idempotencyKey } from "./idempotency-key";
import { approvalKey, calleePath, EFFECT_METHOD, effectKey, resultKey, stepErrorKey, stepKey, type EffectKind } from "../journal/keys";
import { DeliveryOrder } from "./delivery-order";
import { argsFingerprint, CALL_FINGERPRINT } from "../journal/fingerprint";
import { inStep, stepRunning } from "./step-scope";
import { askModel } from "./model-step";
import { recordedCall } from "../toolsets/wrappers/journaled";
import { BOUNDARY, guarded, type Effect, type SignalBoundary } from "./signal-boundary";
import { type EFFECT_METHODS, OWN_EFFECTS } from "./context-with";
import type { UsageMeter } from "./usage";
import { DEFAULT_INPUT, DEFAULT_MAX_TURNS, parseInstanceSpec } from "../catalog/worker-file";
import type { CallFrame } from "../types/callable";
import type { WorkerFiles } from "../types/context";
import type { Toolset } from "../types/toolset";
import type { CatalogWorker, InstanceSpec } from "../types/worker";
import type { AgentOptions, ToolContext } from "../types/context";
import type { StateKV } from "../types/state";
import { checkedAttribute } from "../attributes";
import { setAttributeStep } from "./set-attribute";
import { scheduleStep } from "./schedule-step";
import { checkedMap, checkedSpawn, childResult, mapped, spawnStep } from "./spawn-step";
import { childEndKey } from "../journal/keys";
import type { ChildHandle } from "../types/children";

/** `fingerprint`: the call's (journal/fingerprint.ts `CALL_FINGERPRINT`), when its maker has it cheaply. */
export function toolContext(
  run: CallServices,
  frame: CallFrame,
  toolset: Toolset,
  callPath: string,
  usage: UsageMeter,
  state: StateKV,
  fingerprint?: number,
): ToolContext {
  return new CallContext(run, frame, toolset, callPath, usage, state, fingerprint);
}

/** What a context's effect methods act on: shared by a context and its `contextWith` copies, the effect counter too. */
interface CallCore {
  readonly run: CallServices;
  readonly frame: CallFrame;
  readonly toolset: Toolset;
  readonly callPath: string;
  readonly usage: UsageMeter;
  readonly state: StateKV;
  /** Effects so far: `n` of the next `<kind>:<n>` key. */
  n: number;
  /** Hands its effects' results back in the journal's order (made on the first effect). */
  order?: DeliveryOrder;
}

const CORE = Symbol("callCore");

/**
 * The key of the context's next effect, `kind`. Refused inside a `ctx.step` function
 * (step-scope.ts), before a number is taken; a number the journal holds as another
 * kind fails the run (`nondeterministic`): the context's calls have been renumbered.
 */
function next(core: CallCore, kind: EffectKind): string {
  const step = stepRunning();
  if (step !== undefined) throw insideStep(kind, step);
  const n = ++core.n;
  const key = effectKey(core.callPath, kind, n);
  core.run.journal.checkSlot(core.callPath, n, kind, key);
  return key;
}

const insideStep = (kind: EffectKind | "step", step: string) =>
  new ToolError(
    `ctx.${kind === "step" ? "step" : EFFECT_METHOD[kind]} was called inside ctx.step("${step.slice(0, 80)}"): a step's function runs once and is skipped on replay, so it must not call ctx; make the call before or after the step, or a step of its own`,
  );

/**
 * Runs one effect of the context: `key` is taken first (in program order), `run` makes
 * the effect, and its result reaches the caller in its turn (delivery-order.ts):
 * `completes` is the journal step that records it.
 */
function effect<T>(core: CallCore, kind: EffectKind, run: (key: string) => Promise<T>, completes: (key: string) => string = (k) => k): Promise<T> {
  let key: string;
  let running: Promise<T>;
  try {
    key = next(core, kind);
    running = run(key);
  } catch (err) {
    return Promise.reject(err);
  }
  return ordered(core, completes(key), running);
}

function ordered<T>(core: CallCore, completes: string, running: Promise<T>, failedKey?: string): Promise<T> {
  const journal = core.run.journal;
  core.order ??= new DeliveryOrder((k) => journal.ordinal(k));
  return core.order.deliver(completes, running, failedKey);
}

/** A step's error as the journal keeps it: its message, bounded. */
interface RecordedStepError {
  error: string;
}
const MAX_STEP_ERROR_CHARS = 8000;

/**
 * `ctx.step(name, fn)`: `fn`'s value, recorded; or its error, recorded too (under
 * `step-error:<name>`), so a replay meets the same failure at the same point of the
 * journal's order as the first run did — run again, a failure would come back at another
 * time (or not at all) and move every later call. Either way the step runs once. Signals
 * are no outcome: they stop the activation, and the step runs again on replay.
 */
function memoized<T>(core: CallCore, name: string, fn: () => T | Promise<T>): Promise<T> {
  const { journal, keyGrammar } = core.run;
  const key = stepKey(keyGrammar, core.callPath, name);
  const failedKey = stepErrorKey(keyGrammar, core.callPath, name);
  // The same name twice at once in one context: a mistake of the code, refused (not recorded: the first one's outcome will be).
  if (journal.executing(key))
    return Promise.reject(new ToolError(`ctx.step("${name.slice(0, 80)}") is already running: two steps of one call may not share a name`));
  const failed = journal.get<RecordedStepError>(failedKey);
  const running: Promise<T> = failed
    ? Promise.reject(new ToolError(failed.error))
    : journal
        .step(key, () => inStep(name, fn))
        .catch(async (err: unknown) => {
          if (propagates(err) || err instanceof RunError) throw err;
          const recorded = await journal.record<RecordedStepError>(failedKey, { error: messageOf(err).slice(0, MAX_STEP_ERROR_CHARS) });
          throw new ToolError(recorded.error);
        });
  return ordered(core, key, running, failedKey);
}

type LazyMember = (typeof EFFECT_METHODS)[number] | "files" | "map";

/**
 * Each member a context makes only when it is first read, from the call's core; `boundary`: the
 * copy's, when user code holds it (what a member hands out that pauses must report there too).
 */
const LAZY: { [K in LazyMember]: (core: CallCore, boundary?: SignalBoundary) => ToolContext[K] } = {
  files: ({ run, frame }) => workerFiles(run, frame),
  llmAsk:
    (core) =>
    (prompt, opts = {}) =>
      effect(core, "ask", (key) =>
        askModel({
          ...frameModels(core.run, core.frame),
          key,
          model: opts.model ?? core.frame.model,
          usage: core.usage,
          prompt,
          system: opts.system,
        }),
      ),
  llmAgent: (core) => (opts) =>
    effect(
      core,
      "agent",
      async (base) => {
        const { run, frame, usage } = core;
        const agent = run.callables.worker(adHocWorker(run, frame, opts));
        const meter = usage.child();
        const input = typeof opts.input === "string" ? { input: opts.input } : opts.input;
        const fp = argsFingerprint({ instructions: opts.instructions, input });
        return recordedCall(
          run.journal,
          resultKey(base),
          meter,
          () => agent.call(input, { path: base, parent: frame, usage: meter, model: opts.model }),
          "llmAgent",
          fp,
        );
      },
      resultKey,
    ),
  callTool: (core) => (name, args) =>
    effect(
      core,
      "call",
      async (key) => core.toolset.callTool(name, args, toolContext(core.run, core.frame, core.toolset, key, core.usage.child(), core.state)),
      resultKey,
    ),
  callWorker: (core) => (name, input) =>
    effect(
      core,
      "worker",
      async (base) => {
        const { run, frame, usage } = core;
        const callee = run.callables.get(name);
        if (!callee) throw new ToolError(`unknown worker "${name}"; known: ${run.callables.names().join(", ")}`);
        const meter = usage.child();
        const call = () => callee.call(input, { path: calleePath(base, name), parent: frame, usage: meter });
        return recordedCall(run.journal, resultKey(base), meter, call, name, argsFingerprint(input));
      },
      resultKey,
    ),
  step: (core) => (name, fn) => {
    const outer = stepRunning();
    return outer === undefined ? memoized(core, name, fn) : Promise.reject(insideStep("step", outer));
  },
  now: (core) => () => effect(core, "now", (key) => core.run.journal.step(key, () => core.run.clock.now())),
  randomId: (core) => () => effect(core, "random", (key) => core.run.journal.step(key, () => crypto.randomUUID())),
  askHuman: (core) => (q) => effect(core, "human", (path) => core.run.askHuman(core.frame, path, q), approvalKey),
  sleep:
    (core) =>
    async (duration, opts = {}) => {
      const ms = boundedWait(durationMs(duration, "ctx.sleep"), MAX_WAIT_MS, "ctx.sleep");
      await wait(core, { kind: "sleep", ms, reason: opts.reason });
    },
  sleepUntil:
    (core) =>
    async (time, opts = {}) => {
      const until = instant(time);
      // Bounded as ctx.sleep is; the run's clock only moves on, so a replay never refuses what was accepted.
      if (until - core.run.clock.now() > MAX_WAIT_MS)
        throw new ToolError(
          `ctx.sleepUntil: ${new Date(until).toISOString()} is further ahead than the longest wait allowed here (${shownDuration(MAX_WAIT_MS)})`,
        );
      await wait(core, { kind: "sleep", until, reason: opts.reason });
    },
  waitForEvent: (core) => async (name, opts) => {
    const event = eventName(name, "ctx.waitForEvent");
    if (!opts) throw new ToolError('ctx.waitForEvent: give a timeout, e.g. ctx.waitForEvent(name, { timeout: "2h" })');
    const timeout = boundedWait(durationMs(opts.timeout, "ctx.waitForEvent timeout"), MAX_WAIT_MS, "ctx.waitForEvent");
    const correlation = opts.key === undefined ? undefined : correlationKey(opts.key, "ctx.waitForEvent key");
    const end = await wait(core, { kind: "event", name: event, correlation, ms: timeout, reason: opts.reason });
    return eventWaitResult(end, event);
  },
  setAttribute: (core) => async (name, value) => {
    // Checked before a slot is taken: a name or value it refuses is the same on every replay.
    const attr = checkedAttribute(name, value, "ctx.setAttribute");
    await effect(core, "attr", (key) => setAttributeStep(core.run.journal, core.run.attributes, key, attr));
  },
  schedule: (core) => (spec) => effect(core, "schedule", (key) => scheduleStep(core.run.journal, core.run.schedules, core.run.runId, key, spec)),
  spawn:
    (core, boundary) =>
    (worker, input, opts = {}) => {
      // Checked before a slot is taken: what it refuses is refused the same on every replay.
      const checked = checkedSpawn(worker, opts.attributes, "ctx.spawn");
      const { run, frame } = core;
      return effect(core, "spawn", async (key) => {
        const { journal, children, runId } = run;
        const spawning = { journal, children, runId, budgetForChild: () => run.budgetForChild(frame, key), usage: core.usage };
        const child = await spawnStep(spawning, key, { ...checked, input, depth: frame.depth });
        return childHandle(core, key, child, boundary);
      });
    },
  // Not guarded itself (the getter): it is made of the copy's guarded spawn and result, so each child's pause parks on its own.
  map:
    (core, boundary) =>
    async (worker, inputs, opts = {}) => {
      const checked = checkedMap(inputs, opts.concurrency);
      const spawn = LAZY.spawn(core, boundary);
      const guard = boundary ? (e: () => Promise<ChildHandle>) => boundary.call(e) : (e: () => Promise<ChildHandle>) => e();
      return mapped(checked.inputs, checked.concurrency, async (input) => (await guard(() => spawn(worker, input, { attributes: opts.attributes }))).result());
    },
};

/** What `ctx.spawn` hands back: `result()` waits for the child's end under the spawn's `/end` key, in the journal's order. */
function childHandle(core: CallCore, spawn: string, child: { id: string; worker: string }, boundary: SignalBoundary | undefined): ChildHandle {
  const result = () => {
    const step = stepRunning();
    if (step !== undefined) return Promise.reject(insideStep("spawn", step));
    const { run, frame, callPath } = core;
    const waiting = childResult({ journal: run.journal, record: run.recordWait, spawn, child, since: run.clock.now(), callPath, workerChain: frame.chain });
    return ordered(core, childEndKey(spawn), waiting);
  };
  return { id: child.id, worker: child.worker, result: boundary ? () => boundary.call(result) : result };
}

/** A wait under the call's next `wait:<n>` key (waits/wait.ts), ending at `until` or `ms` from now: its recorded end, or a pause. */
function wait(core: CallCore, w: Pick<PendingWait, "kind" | "name" | "correlation" | "reason"> & ({ until: number } | { ms: number })) {
  return effect(core, "wait", (key) => awaitWaitAt(core, key, w));
}

function awaitWaitAt(core: CallCore, key: string, w: Pick<PendingWait, "kind" | "name" | "correlation" | "reason"> & ({ until: number } | { ms: number })) {
  const { run, frame, callPath } = core;
  const { kind, name, correlation } = w;
  const since = run.clock.now();
  const until = "until" in w ? w.until : since + w.ms;
  const reason = w.reason === undefined ? undefined : String(w.reason).slice(0, MAX_REASON_CHARS);
  return awaitWait({
    journal: run.journal,
    record: run.recordWait,
    key,
    wait: {
      kind,
      since,
      until,
      callPath,
      workerChain: frame.chain,
      ...(name ? { name } : {}),
      ...(correlation ? { correlation } : {}),
      ...(reason ? { reason } : {}),
    },
  });
}

/** A point in time from code: ms since the epoch, a Date, or ISO 8601 text; one a Date holds (every reader shows it as one). */
function instant(time: number | Date | string): number {
  const at = time instanceof Date ? time.getTime() : typeof time === "string" ? Date.parse(time) : time;
  if (typeof at !== "number" || Number.isNaN(new Date(at).getTime())) throw new ToolError(`ctx.sleepUntil: ${String(time).slice(0, 40)} is not a time`);
  return at;
}

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
  readonly [CALL_FINGERPRINT]: number | undefined;
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
  declare readonly askHuman: ToolContext["askHuman"];
  declare readonly sleep: ToolContext["sleep"];
  declare readonly sleepUntil: ToolContext["sleepUntil"];
  declare readonly waitForEvent: ToolContext["waitForEvent"];
  declare readonly setAttribute: ToolContext["setAttribute"];
  declare readonly schedule: ToolContext["schedule"];
  declare readonly spawn: ToolContext["spawn"];
  declare readonly map: ToolContext["map"];

  constructor(
    run: CallServices,
    frame: CallFrame,
    toolset: Toolset,
    readonly callPath: string,
    readonly usage: UsageMeter,
    readonly state: StateKV,
    fingerprint: number | undefined,
  ) {
    this.runId = run.runId;
    this.depth = frame.depth;
    this.workerChain = frame.chain;
    this[CORE] = { run, frame, toolset, callPath, usage, state, n: 0 };
    this[CALL_FINGERPRINT] = fingerprint;
  }

  get idempotencyKey(): string {
    return idempotencyKey(this.runId, this.callPath);
  }
}

// Read: made from the core (guarded on a bound copy) and kept on the instance. Assigned (`contextWith`, a wrapper): kept as given.
for (const name of Object.keys(LAZY) as LazyMember[]) {
  const make = LAZY[name] as (core: CallCore, boundary?: SignalBoundary) => unknown;
  Object.defineProperty(CallContext.prototype, name, {
    get(this: CallContext) {
      const boundary = this[BOUNDARY];
      const made = make(this[CORE], boundary);
      return own(this, name, boundary && name !== "files" && name !== "map" ? guarded(boundary, made as Effect) : made);
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
  // An effect method kept as an own member: a bound copy of this context guards it (signal-boundary.ts `boundContext`).
  if (key !== "files") (ctx as unknown as Record<symbol, boolean>)[OWN_EFFECTS] = true;
  return value;
}

/** `llmAgent` options as a worker, checked like a worker file (kinds, configs). */
function adHocWorker(run: CallServices, frame: CallFrame, opts: AgentOptions): CatalogWorker {
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
  const problems = checkWorker(worker, run.kinds);
  if (problems.length) throw new ToolError(problems.map((p) => p.message).join("; "));
  return worker;
}
