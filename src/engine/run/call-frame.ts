import { checkBudget } from "./budget";
import { propagates, RunError } from "../errors";
import { globMatcher } from "../glob";
import type { ModelServices } from "./model-step";
import type { RunServices } from "./services";
import { buildCallToolset } from "../toolsets/instances";
import { callScopeId } from "../toolsets/scope-id";
import type { CallSite } from "../types/callable";
import type { Toolset } from "../types/toolset";
import type { CatalogWorker } from "../types/worker";
import type { CallFrame } from "../types/callable";
import type { StateKV } from "../types/state";

/** The frame of a call one level below `at.parent`; past `MAX_DEPTH` it fails with the chain of calls. */
export function openFrame(run: RunServices, worker: CatalogWorker, at: CallSite): CallFrame {
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
export async function inFrame<T>(run: RunServices, frame: CallFrame, body: (toolset: Toolset, state: StateKV) => Promise<T>): Promise<T> {
  const { toolset, close } = await buildCallToolset(run, frame);
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
export function frameModels(run: RunServices, frame: CallFrame): ModelServices {
  return { journal: run.journal, models: run.models, prices: run.prices, budget: (key) => checkBudget(run, frame, key), file: frame.worker.file };
}

/** The worker's model > the caller's > DEFAULT_MODEL, checked against compatible_models. */
function chooseModel(run: RunServices, worker: CatalogWorker, inherited: string | undefined): string {
  const model = worker.model ?? inherited ?? run.defaultModel;
  const allowed = worker.compatibleModels;
  if (allowed && !allowed.some((g) => globMatcher(g, { ignoreCase: true })(model))) {
    throw new RunError("model_not_allowed", `${worker.file}: model "${model}" is not in compatible_models (${allowed.join(", ")})`);
  }
  return model;
}
