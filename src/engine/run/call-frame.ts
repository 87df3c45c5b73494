import type { HumanAnswer, HumanQuestion } from "../types/deciders";
import { propagates, RunError } from "../errors";
import { globMatcher } from "../glob";
import type { Journal } from "../journal/journal";
import type { KeyGrammar } from "../journal/keys";
import type { ModelServices } from "./model-step";
import type { WaitRecorder } from "../waits/wait";
import type { CallFrame, Callables, CallSite } from "../types/callable";
import type { ToolsetRegistry } from "../types/kind";
import type { ModelResolver } from "../types/model";
import type { Clock } from "../types/ports";
import type { StateBackend, StateKV } from "../types/state";
import type { Toolset } from "../types/toolset";
import type { PriceTable } from "../types/usage";
import type { CatalogWorker } from "../types/worker";
import type { Attributes } from "../attributes";
import type { Schedules } from "../types/schedule";
import type { Children } from "../types/children";
import type { Budget } from "../types/budget";

/**
 * What a worker or function call (its frame, loop and tool contexts) uses of its run.
 * Built once per activation by run/executor.ts: every call and tool call is handed
 * this same object, never a new one. Building a call's toolset and checking the
 * budget are the executor's, reached through two functions, so a call never holds
 * the secrets, instances or approval host they use.
 */
export interface CallServices {
  readonly runId: string;
  readonly journal: Journal;
  /** How this run's journal keys are written (journal/keys.ts). */
  readonly keyGrammar: KeyGrammar;
  /** Workers and functions by name: the one way a call calls anything. */
  readonly callables: Callables;
  /** Changes when the run creates a worker: a loop then lists its tools again. */
  readonly created: { readonly version: number };
  readonly states: StateBackend;
  /** The catalog's kinds: an `llmAgent`'s toolsets are checked against them. */
  readonly kinds: ToolsetRegistry;
  readonly models: ModelResolver;
  readonly prices: PriceTable;
  readonly clock: Clock;
  readonly maxDepth: number;
  readonly defaultModel: string;
  /** Records a pending timer or event wait where the host can end it (waits/wait.ts). */
  readonly recordWait?: WaitRecorder;
  /** The attributes the run started with (`ctx.setAttribute` counts its names against the bound with them). */
  readonly attributes: Attributes;
  /** Where `ctx.schedule` creates schedules (the host's); absent: it is refused. */
  readonly schedules?: Schedules;
  /** Where child runs are started (the host's); absent: they are refused. */
  readonly children?: Children;
  /** The toolset `frame`'s call sees, and what closes it (toolsets/instances.ts `buildCallToolset`). */
  toolsetFor(frame: CallFrame): Promise<{ toolset: Toolset; close(): Promise<void> }>;
  /** The run's budget, checked before `frame` makes the model request under `key` (run/budget.ts `checkBudget`). */
  checkBudget(frame: CallFrame, key: string): void | Promise<void>;
  /** The same check before `frame` starts a child run under `key`, then what the child may spend (run/budget.ts `remainingBudget`). */
  budgetForChild(frame: CallFrame, key: string): Budget | Promise<Budget>;
  /** Asks a person for `frame` under the effect path `path` (approvals/ask-human.ts). */
  askHuman(frame: CallFrame, path: string, q: HumanQuestion): Promise<HumanAnswer>;
}

/** The call-scope id: unique per run and call path, so nested and recursive calls never share. */
export const callScopeId = (runId: string, path: string) => `${runId}:${path}`;

/** The frame of a call one level below `at.parent`; past `MAX_DEPTH` it fails with the chain of calls. */
export function openFrame(run: CallServices, worker: CatalogWorker, at: CallSite): CallFrame {
  const chain = [...(at.parent?.chain ?? []), worker.name];
  const depth = (at.parent?.depth ?? 0) + 1;
  if (depth > run.maxDepth) {
    throw new RunError("max_depth", `call depth ${depth} exceeds MAX_DEPTH ${run.maxDepth}: ${chain.join(" → ")}`);
  }
  return { worker, path: at.path, depth, chain, model: chooseModel(run, worker, at.model ?? at.parent?.model), usage: at.usage, attachments: at.attachments };
}

/**
 * Runs `body` with the frame's toolset and its call-scoped context state. The toolset
 * is closed when the call ends, whatever the outcome; the call's state outlives a
 * pause (the call is not over), never the call.
 */
export async function inFrame<T>(run: CallServices, frame: CallFrame, body: (toolset: Toolset, state: StateKV) => Promise<T>): Promise<T> {
  const { toolset, close } = await run.toolsetFor(frame);
  const scopeId = callScopeId(run.runId, frame.path);
  let suspended = false;
  try {
    return await body(toolset, run.states.open("call", scopeId, "~context"));
  } catch (err) {
    suspended = propagates(err);
    throw err;
  } finally {
    await close();
    if (!suspended) {
      // This call's scope and those of the calls under it ("/"): a raw prefix would also take
      // a sibling's (agent:1 is a prefix of agent:10, which may still be running).
      await run.states.clear("call", scopeId);
      await run.states.clear("call", `${scopeId}/`, { prefix: true });
    }
  }
}

/** What the frame's model steps use of the run: the budget is checked for the run, on behalf of this frame's worker. */
export function frameModels(run: CallServices, frame: CallFrame): ModelServices {
  return { journal: run.journal, models: run.models, prices: run.prices, budget: (key) => run.checkBudget(frame, key), file: frame.worker.file };
}

/** The worker's model > the caller's > DEFAULT_MODEL, checked against compatible_models. */
function chooseModel(run: CallServices, worker: CatalogWorker, inherited: string | undefined): string {
  const model = worker.model ?? inherited ?? run.defaultModel;
  const allowed = worker.compatibleModels;
  if (allowed && !allowed.some((g) => globMatcher(g, { ignoreCase: true })(model))) {
    throw new RunError("model_not_allowed", `${worker.file}: model "${model}" is not in compatible_models (${allowed.join(", ")})`);
  }
  return model;
}
