import { checkBudget, remainingBudget, runBudget } from "./budget";
import { askHuman } from "../approvals/ask-human";
import { onParsedInput } from "../approvals/call-policy";
import type { CallServices } from "./call-frame";
import { workerToolDef } from "../catalog/catalog";
import { runFunction } from "./functions-run";
import { runWorker } from "./loop";
import { failureBeingUndone, undoEffects } from "./compensate";
import { CreatedWorkers } from "./created-workers";
import { RunError, RunPaused, type PendingApproval, type PendingWait, type RunErrorCode } from "../errors";
import { Journal, type BeforeStep } from "../journal/journal";
import { MAX_OUTPUT_DEPTH, nestedDeeper } from "../journal/bounds";
import { MemoryStateBackend } from "../state/memory-state";
import { inProcessGlobals } from "../toolsets/in-process-globals";
import { buildCallToolset, closeAll } from "../toolsets/instances";
import { secretsAmong } from "../toolsets/secret-vars";
import { KEY_GRAMMAR, type KeyGrammar } from "../journal/keys";
import { rememberedApprovals, type ApprovalMode } from "../toolsets/wrappers/approval";
import type { ApprovalNotifier, ApprovalRecorder } from "../approvals/ask-approval";
import type { WaitRecorder } from "../waits/wait";
import { defaultPrices, UsageMeter } from "./usage";
import type { Callable, Callables } from "../types/callable";
import type { Catalog } from "../types/catalog";
import type { JournalStore } from "../types/journal";
import type { ModelResolver } from "../types/model";
import type { Clock, GlobalToolsets, Logger } from "../types/ports";
import type { Toolset } from "../types/toolset";
import type { PriceTable, Usage } from "../types/usage";
import type { Budget } from "../types/budget";
import type { CatalogWorker } from "../types/worker";
import type { RunServices } from "./services";
import type { StateBackend } from "../types/state";
import { ConnectionSlots, type Connections } from "../net/connection-slots";
import type { Attributes } from "../attributes";
import type { Schedules } from "../types/schedule";
import type { Children } from "../types/children";

/** What the platform gives the engine: all of it ports, none of it Cloudflare. */
export interface EngineConfig {
  catalog: Catalog;
  models: ModelResolver;
  states?: StateBackend;
  globals?: GlobalToolsets;
  clock?: Clock;
  log?: Logger;
  /** Default 5. */
  maxDepth?: number;
  prices?: PriceTable;
  defaultModel?: string;
  /** Runs before every step that is about to execute: checkpoints, cancellation, fault injection. */
  beforeStep?: BeforeStep;
  /** Records a pending approval where it can be decided (the host's store); before anyone is told. */
  recordApproval?: ApprovalRecorder;
  /** Tells a human that an approval waits; a journal step, so it runs once per approval. */
  notifier?: ApprovalNotifier;
  /** Records a timer or event wait where its end can be recorded (the host's store); asked again on replay. */
  recordWait?: WaitRecorder;
  /** Where `ctx.schedule` creates schedules (the host's schedule objects); absent: it is refused. */
  schedules?: Schedules;
  /** Where child runs are started (`ctx.spawn`, `ctx.map`, `run: child`: the host's run objects); absent: they are refused. */
  children?: Children;
  /** Values for `${NAME}` in toolset configs (the app's vars and secrets). */
  vars?: Readonly<Record<string, string | undefined>>;
  /** Names in `vars` whose values are configuration, shown where secrets are redacted; every other value is a secret. Default none. */
  plainVars?: readonly string[];
  /**
   * The activation's connections (net/connection-slots.ts): every request the run makes takes its turn here.
   * Give `models` the same (the host builds both); default a fresh line of six for this activation.
   */
  connections?: Connections;
}

export interface RunRequest {
  runId: string;
  worker: string;
  input: unknown;
  approvalMode?: ApprovalMode;
  budget?: Budget;
  /** The key grammar the run's journal is written in (journal/keys.ts): 1 only for a journal begun before grammar 2. */
  keyGrammar?: KeyGrammar;
  /** The attributes the run started with (POST /runs, a trigger); `ctx.setAttribute` adds to them. */
  attributes?: Attributes;
  /** A child run: the depth of the call that spawned it, which its own calls count on from (MAX_DEPTH holds across runs). */
  parentDepth?: number;
  /**
   * The run was cancelled after effects its tools can undo (`compensate:`): its body runs no
   * more; this activation undoes the effects (run/compensate.ts) and the run ends `cancelled`.
   */
  cancelled?: { reason?: string };
}

export type RunOutcome =
  | { status: "succeeded"; output: unknown; usage: Usage }
  | { status: "failed"; error: { code: RunErrorCode; message: string }; usage: Usage }
  /** Cancelled once its effects were undone (`RunRequest.cancelled`); `note`: the undos that could not be made. */
  | { status: "cancelled"; reason?: string; note?: string; usage: Usage }
  /** Paused (`pauseStatus`); each lists all it waits for. */
  | { status: "awaiting_approval" | "waiting"; pending: PendingApproval[]; waits: PendingWait[]; usage: Usage };

/** A paused outcome (the run goes on later), as against one that ended it. */
export const isPaused = (outcome: RunOutcome): outcome is Extract<RunOutcome, { waits: PendingWait[] }> =>
  outcome.status === "awaiting_approval" || outcome.status === "waiting";

/**
 * A pause's status: `awaiting_approval` while a call waits for a person to approve or
 * reject it; else `waiting` (timers, events, questions to people: each ends by itself,
 * with "no answer" for a question).
 */
export const pauseStatus = (pending: readonly PendingApproval[]): "awaiting_approval" | "waiting" =>
  pending.some((p) => p.kind !== "question") ? "awaiting_approval" : "waiting";

/** One thing a pause waits for besides approvals, as its `run_*` event and log line name it: a question by its id. */
export interface WaitingFor {
  kind: PendingWait["kind"] | "question";
  /** An event's name; a question's id (`POST /runs/:id/questions/:name` answers it). */
  name?: string;
}

/** What a paused outcome waits for besides approvals: its timers, events and questions. */
export function waitingFor(paused: Pick<Extract<RunOutcome, { waits: PendingWait[] }>, "pending" | "waits">): WaitingFor[] {
  return [
    ...paused.waits.map((w) => ({ kind: w.kind, ...(w.name ? { name: w.name } : {}) })),
    ...paused.pending.filter((p) => p.kind === "question").map((p) => ({ kind: "question" as const, name: p.id })),
  ];
}

export const DEFAULT_MAX_DEPTH = 5;

const consoleLogger: Logger = {
  warn: (message, data) => console.warn(message, data ?? ""),
};

/**
 * Runs (or resumes) a run against its journal, to completion or to the next pause.
 * Run-scoped instances are closed when this activation ends; run- and call-scoped
 * state is deleted when the run ends. `RunInterrupted` and errors other than the
 * run's own outcome (storage failures, bugs) are thrown: the caller re-arms or
 * retries the activation, and replay continues where the journal ends.
 */
export async function executeRun(config: EngineConfig, store: JournalStore, req: RunRequest): Promise<RunOutcome> {
  const states = config.states ?? new MemoryStateBackend();
  const journal = await Journal.open(store, config.beforeStep);
  const created = CreatedWorkers.fromJournal(journal, config.catalog.kinds);
  const run: RunServices = {
    runId: req.runId,
    catalog: config.catalog,
    callables: catalogCallables(config.catalog, created, () => calls),
    created,
    models: config.models,
    journal,
    keyGrammar: req.keyGrammar ?? KEY_GRAMMAR,
    states,
    globals: config.globals ?? inProcessGlobals(states),
    runInstances: new Map(),
    clock: config.clock ?? { now: () => Date.now() },
    log: config.log ?? consoleLogger,
    maxDepth: (config.maxDepth ?? DEFAULT_MAX_DEPTH) - (req.parentDepth ?? 0),
    prices: config.prices ?? defaultPrices,
    defaultModel: config.defaultModel ?? "test:tools",
    budget: runBudget(req.budget ?? {}, config.catalog.get(req.worker)?.budget),
    approvalMode: req.approvalMode ?? "ask",
    approvals: { record: config.recordApproval, notifier: config.notifier },
    recordWait: config.recordWait,
    attributes: req.attributes ?? {},
    schedules: config.schedules,
    children: config.children,
    rememberedApprovals: rememberedApprovals(journal),
    vars: config.vars ?? {},
    secretsOf: secretsAmong(config.vars ?? {}, config.plainVars ?? []),
    usage: new UsageMeter(),
    connections: config.connections ?? new ConnectionSlots(),
  };
  const calls = callServices(run);
  const usage = () => run.usage.snapshot();
  let outcome: RunOutcome;
  try {
    const root = run.callables.get(req.worker);
    if (!root) throw new RunError("unknown_worker", `unknown worker "${req.worker}"; known: ${run.callables.names().join(", ")}`);
    if (req.cancelled) outcome = await cancelledAfterUndoing(run, calls, root.name, req.cancelled);
    else {
      const undoing = failureBeingUndone(journal, root.name);
      if (undoing) throw undoing;
      const output = await root.call(req.input, { path: root.name, usage: run.usage });
      if (nestedDeeper(output, MAX_OUTPUT_DEPTH))
        throw new RunError("invalid_output", `${req.worker}: its output nests deeper than ${MAX_OUTPUT_DEPTH} levels, more than a run's output may`);
      outcome = { status: "succeeded", output, usage: usage() };
    }
  } catch (err) {
    if (err instanceof RunPaused) outcome = { status: pauseStatus(err.pending), pending: err.pending, waits: err.waits, usage: usage() };
    else if (err instanceof RunError) outcome = await failedAfterUndoing(run, calls, req.worker, err);
    else throw err;
  } finally {
    const instances = await Promise.allSettled(run.runInstances.values());
    await closeAll(
      run,
      [...run.runInstances.keys()].flatMap((key, i) =>
        instances[i]!.status === "fulfilled" ? [{ name: key, ts: (instances[i] as PromiseFulfilledResult<Toolset>).value }] : [],
      ),
    );
  }
  if (!isPaused(outcome)) await clearRunState(states, run.runId);
  return outcome;
}

/**
 * A failed run's outcome once its effects are undone (run/compensate.ts); paused instead
 * while an undo waits for its approval.
 */
async function failedAfterUndoing(run: RunServices, calls: CallServices, root: string, err: RunError): Promise<RunOutcome> {
  return afterUndoing(run, calls, root, err, (note) => ({
    status: "failed",
    error: { code: err.code, message: err.message + (note ? ` (${note})` : "") },
    usage: run.usage.snapshot(),
  }));
}

/** A cancelled run's outcome once its effects are undone; paused instead while an undo waits for its approval. */
async function cancelledAfterUndoing(run: RunServices, calls: CallServices, root: string, cancel: { reason?: string }): Promise<RunOutcome> {
  return afterUndoing(run, calls, root, undefined, (note) => ({
    status: "cancelled",
    ...(cancel.reason ? { reason: cancel.reason } : {}),
    ...(note ? { note } : {}),
    usage: run.usage.snapshot(),
  }));
}

/** Undoes the run's effects (`failure`: why it failed, recorded), then its end: `note` names the undos that could not be made. */
async function afterUndoing(
  run: RunServices,
  calls: CallServices,
  root: string,
  failure: RunError | undefined,
  ended: (note: string | undefined) => RunOutcome,
): Promise<RunOutcome> {
  try {
    const workerNamed = (name: string) => run.catalog.get(name) ?? run.created.get(name)?.worker;
    const failed = await undoEffects(calls, run.log, run.usage, workerNamed, root, failure);
    return ended(failed ? `${failed} of its effects could not be undone: see the run's log` : undefined);
  } catch (paused) {
    if (paused instanceof RunPaused) return { status: pauseStatus(paused.pending), pending: paused.pending, waits: paused.waits, usage: run.usage.snapshot() };
    throw paused;
  }
}

/** Deletes a run's run- and call-scoped state: when it ends, or is cancelled. */
export async function clearRunState(states: StateBackend, runId: string): Promise<void> {
  await states.clear("run", runId);
  await states.clear("call", `${runId}:`, { prefix: true });
}

/** The slice of the run its calls see, made once per activation: the loop hands this same object to every call. */
function callServices(run: RunServices): CallServices {
  const { runId, journal, keyGrammar, callables, created, states, models, prices, clock, maxDepth, defaultModel } = run;
  return {
    runId,
    journal,
    keyGrammar,
    callables,
    created,
    states,
    kinds: run.catalog.kinds,
    models,
    prices,
    clock,
    maxDepth,
    defaultModel,
    recordWait: run.recordWait,
    attributes: run.attributes,
    schedules: run.schedules,
    children: run.children,
    toolsetFor: (frame) => buildCallToolset(run, frame),
    checkBudget: (frame, key) => checkBudget(run, frame, key),
    budgetForChild: (frame, key) => {
      const asking = checkBudget(run, frame, key);
      return asking ? asking.then(() => remainingBudget(run)) : remainingBudget(run);
    },
    askHuman: (frame, path, q) => askHuman(run, frame, path, q),
  };
}

/**
 * The run's callables: the catalog's workers and functions, and the workers the run
 * created, one namespace. The only
 * place that tells an LLM worker from a function; every caller just calls.
 * `calls` is read at call time (the run's services include this resolver).
 */
function catalogCallables(catalog: Catalog, created: CreatedWorkers, calls: () => CallServices): Callables {
  const of = (w: CatalogWorker): Callable => ({
    name: w.name,
    description: workerToolDef(w).description,
    input: w.input,
    file: w.file,
    attachments: w.attachments,
    ...(w.code ? { approvalHooks: onParsedInput(w.code.input, w.code) } : {}),
    call: (input, at) => (w.code ? runFunction(calls(), w, w.code, input, at) : runWorker(calls(), w, input, at)),
  });
  return {
    get: (name) => {
      // Created workers never shadow the catalog: a creation with a taken name is refused.
      const w = catalog.get(name) ?? created.get(name)?.worker;
      return w && of(w);
    },
    names: () => [...catalog.workers.keys(), ...created.names()].sort(),
    worker: of,
  };
}
