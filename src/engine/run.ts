import { runBudget } from "./budget";
import type { Callables } from "./callables";
import { catalogCallables } from "./callables-catalog";
import type { Catalog } from "./catalog";
import { CreatedWorkers } from "./created-workers";
import { ApprovalRequired, RunError, type PendingApproval, type RunErrorCode } from "./errors";
import { Journal, type BeforeStep } from "./journal/journal";
import type { JournalStore } from "./journal/store";
import type { ModelResolver } from "./model/model";
import { consoleLogger, type Clock, type GlobalToolsets, type Logger, type StateBackend } from "./ports";
import { MemoryStateBackend } from "./state/memory-state";
import { inProcessGlobals } from "./toolsets/in-process-globals";
import { closeAll } from "./toolsets/instances";
import type { Substitution } from "./toolsets/interpolate";
import { secretsAmong } from "./toolsets/secret-vars";
import type { Toolset } from "./toolsets/toolset";
import { KEY_GRAMMAR, type KeyGrammar } from "./journal/keys";
import { rememberedApprovals, type ApprovalMode } from "./toolsets/wrappers/approval";
import type { ApprovalNotifier, ApprovalRecorder } from "./approvals/ask-approval";
import { defaultPrices, UsageMeter, type PriceTable, type Usage } from "./usage";

export interface Budget {
  maxTokens?: number;
  maxCostUsd?: number;
  /** `ask`: pause for the run's approver to extend the budget by the same amount (src/engine/budget.ts). */
  onExceed?: "fail" | "ask";
}

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
  /** Values for `${NAME}` in toolset configs (the app's vars and secrets). */
  vars?: Readonly<Record<string, string | undefined>>;
  /** Names in `vars` whose values are configuration, shown where secrets are redacted; every other value is a secret. Default none. */
  plainVars?: readonly string[];
}

export interface RunRequest {
  runId: string;
  worker: string;
  input: unknown;
  approvalMode?: ApprovalMode;
  budget?: Budget;
  /** The key grammar the run's journal is written in (journal/keys.ts): 1 only for a journal begun before grammar 2. */
  keyGrammar?: KeyGrammar;
}

export type RunOutcome =
  | { status: "succeeded"; output: unknown; usage: Usage }
  | { status: "failed"; error: { code: RunErrorCode; message: string }; usage: Usage }
  | { status: "awaiting_approval"; pending: PendingApproval[]; usage: Usage };

/** Everything one run's worker calls share during one activation. */
export interface RunServices {
  runId: string;
  catalog: Catalog;
  /** Workers and functions by name: the one way the engine calls anything. */
  callables: Callables;
  /** Workers this run created (`worker_creation`), rebuilt from the journal at each activation. */
  created: CreatedWorkers;
  models: ModelResolver;
  journal: Journal;
  /** How this run's journal keys are written (journal/keys.ts). */
  keyGrammar: KeyGrammar;
  states: StateBackend;
  globals: GlobalToolsets;
  /** Run-scoped instances of this activation, by instance key. */
  runInstances: Map<string, Promise<Toolset>>;
  clock: Clock;
  log: Logger;
  maxDepth: number;
  prices: PriceTable;
  defaultModel: string;
  /** The run's limits: the request's over the root worker's `budget:`. */
  budget: Budget;
  approvalMode: ApprovalMode;
  recordApproval?: ApprovalRecorder;
  notifier?: ApprovalNotifier;
  /** Calls approved "for the rest of the run", from the journal at activation start. */
  rememberedApprovals: ReadonlySet<string>;
  vars: Readonly<Record<string, string | undefined>>;
  /** The secrets among values filled into a config (what its instance must redact). */
  secretsOf: (filled: readonly Substitution[]) => Substitution[];
  usage: UsageMeter;
}

export const DEFAULT_MAX_DEPTH = 5;

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
  const run: RunServices = {
    runId: req.runId,
    catalog: config.catalog,
    callables: catalogCallables(config.catalog, () => run),
    created: CreatedWorkers.fromJournal(journal, config.catalog.kinds),
    models: config.models,
    journal,
    keyGrammar: req.keyGrammar ?? KEY_GRAMMAR,
    states,
    globals: config.globals ?? inProcessGlobals(states),
    runInstances: new Map(),
    clock: config.clock ?? { now: () => Date.now() },
    log: config.log ?? consoleLogger,
    maxDepth: config.maxDepth ?? DEFAULT_MAX_DEPTH,
    prices: config.prices ?? defaultPrices,
    defaultModel: config.defaultModel ?? "test:tools",
    budget: runBudget(req.budget ?? {}, config.catalog.get(req.worker)?.budget),
    approvalMode: req.approvalMode ?? "ask",
    recordApproval: config.recordApproval,
    notifier: config.notifier,
    rememberedApprovals: rememberedApprovals(journal),
    vars: config.vars ?? {},
    secretsOf: secretsAmong(config.vars ?? {}, config.plainVars ?? []),
    usage: new UsageMeter(),
  };
  const usage = () => run.usage.snapshot();
  let outcome: RunOutcome;
  try {
    const root = run.callables.get(req.worker);
    if (!root) throw new RunError("unknown_worker", `unknown worker "${req.worker}"; known: ${run.callables.names().join(", ")}`);
    const output = await root.call(req.input, { path: root.name, usage: run.usage });
    outcome = { status: "succeeded", output, usage: usage() };
  } catch (err) {
    if (err instanceof ApprovalRequired) outcome = { status: "awaiting_approval", pending: err.pending, usage: usage() };
    else if (err instanceof RunError) outcome = { status: "failed", error: { code: err.code, message: err.message }, usage: usage() };
    else throw err;
  } finally {
    const instances = await Promise.allSettled(run.runInstances.values());
    await closeAll(
      run,
      [...run.runInstances.keys()].flatMap((key, i) => (instances[i]!.status === "fulfilled" ? [{ name: key, ts: (instances[i] as PromiseFulfilledResult<Toolset>).value }] : [])),
    );
  }
  if (outcome.status !== "awaiting_approval") await clearRunState(states, run.runId);
  return outcome;
}

/** Deletes a run's run- and call-scoped state: when it ends, or is cancelled. */
export async function clearRunState(states: StateBackend, runId: string): Promise<void> {
  await states.clear("run", runId);
  await states.clear("call", `${runId}:`, { prefix: true });
}
