import { messageOf, nondeterministic, propagates, RunInterrupted, ToolError, WaitRequired, type PendingWait } from "../errors";
import type { Journal } from "../journal/journal";
import { argsFingerprint } from "../journal/fingerprint";
import { childEndKey } from "../journal/keys";
import { checkedAttributes } from "../attributes";
import { MAX_WAIT_MS } from "../waits/bounds";
import { waitId, type WaitRecorder } from "../waits/wait";
import { sha256Hex } from "./idempotency-key";
import { boundedUsage } from "./usage";
import type { ChildEnd, ChildSpec, Children } from "../types/children";
import type { Budget } from "../types/budget";
import type { UsageSink } from "../types/usage";

/** The most child runs one run may start (`ctx.spawn`, `ctx.map`, `run: child` calls that started one). */
export const MAX_CHILDREN_PER_RUN = 1000;
/** The most children one `ctx.map` runs at once. */
export const MAX_MAP_CONCURRENCY = 50;
/** `ctx.map`'s concurrency when none is given. */
export const DEFAULT_MAP_CONCURRENCY = 10;
/** A worker's name as the catalog allows it (worker-file.ts): anything else is refused before a slot is taken. */
const WORKER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A spawn step's value: the host's answer, the child's worker, what it was asked (a hash of worker and input), and the budget it was started with. */
type SpawnStep = ({ ok: true; id: string } | { ok: false; error: string }) & { worker: string; fp?: number; budget?: Budget };

/** What a spawn needs of its run besides the journal and the host (context.ts gives the spawning call's). */
export interface SpawnServices {
  journal: Journal;
  children?: Children;
  runId: string;
  /**
   * The run's budget checked before a child is started (run/budget.ts `checkBudget`: fails, or pauses to ask),
   * then what the child may spend (`remainingBudget`). Asked only when the start is about to be made.
   */
  budgetForChild: () => Budget | Promise<Budget>;
  /** The spawning call's meter: an ended child's usage is added here, on every replay alike. */
  usage: UsageSink;
}

/** The child run the spawn under `key` starts: the same id on every replay, another for every spawn of every run. */
export const childRunIdFor = (runId: string, key: string) => `child-${sha256Hex(`${runId}\n${key}`).slice(0, 40)}`;

/** A spawn's arguments checked before it takes a slot: a bad one is refused the same on every replay. */
export function checkedSpawn(worker: unknown, attributes: unknown, what: string): { worker: string; attributes: Record<string, string> } {
  if (typeof worker !== "string" || !WORKER_NAME.test(worker)) throw new ToolError(`${what}: a worker's name is 1-64 characters of A-Z a-z 0-9 _ -`);
  const checked = checkedAttributes(attributes, `${what} attributes`);
  if ("problems" in checked) throw new ToolError(checked.problems.join("; "));
  return { worker, attributes: checked.attributes };
}

/**
 * Starts the child run of the spawn under `key` (`<call>/spawn:<n>`) once: the host's answer is the
 * step's value, a refusal too. The child's id derives from the run and the key, and the host's start
 * is idempotent, so a parent evicted after the start and before this step was recorded starts the
 * same child again, which is no second child (and keeps the budget of its first start). The run's
 * budget is checked before a start as before a model request, and the child may spend what is left
 * of it. A child that ended (its end is in the journal the activation loaded) adds its usage to the
 * spawning call's here, once per activation: the parent's total is the same on every replay.
 */
export async function spawnStep(run: SpawnServices, key: string, spec: ChildSpec): Promise<{ id: string; worker: string }> {
  const { journal, children } = run;
  const fp = argsFingerprint({ worker: spec.worker, input: spec.input });
  const step = await journal.step<SpawnStep>(key, async () => {
    if (!children) return { ok: false, error: "this host starts no child runs", worker: spec.worker, fp };
    const made = journal.succeededEffects("spawn");
    if (made >= MAX_CHILDREN_PER_RUN)
      return { ok: false, error: `this run started ${made} child runs, the most a run may (${MAX_CHILDREN_PER_RUN})`, worker: spec.worker, fp };
    const budget = await run.budgetForChild();
    return { ...(await started(children, childRunIdFor(run.runId, key), key, { ...spec, budget })), worker: spec.worker, fp, budget };
  });
  if (step.worker !== spec.worker || step.fp !== fp)
    throw nondeterministic(key, `a child run of ${step.worker}`, `one of ${spec.worker} (or with another input)`);
  if (!step.ok) throw new ToolError(`starting a child run of ${spec.worker}: ${step.error}`);
  const used = boundedUsage(journal.get<ChildEnd>(childEndKey(key))?.usage);
  if (used) run.usage.add(used);
  return { id: step.id, worker: step.worker };
}

/** The host's answer; none at all stops the activation, to be retried later (code that could catch it would take another path on replay). */
async function started(children: Children, id: string, key: string, spec: ChildSpec) {
  try {
    return await children.start(id, key, spec);
  } catch (err) {
    if (propagates(err)) throw err;
    throw new RunInterrupted("retry", `starting a child run: no answer from its object: ${messageOf(err)}`);
  }
}

export interface ChildWait {
  journal: Journal;
  record?: WaitRecorder;
  /** The spawn's key (`<call>/spawn:<n>`): its end is recorded under `childEndKey(spawn)`. */
  spawn: string;
  child: { id: string; worker: string };
  since: number;
  callPath: string;
  workerChain: readonly string[];
}

/**
 * The child's result once it ended: its output, or a ToolError for a failed or cancelled child
 * (the parent's code, or its model, handles it as any tool's failure). Not ended yet: the host
 * keeps a wait for it (shown while the parent waits; a child's end is no deadline) and the run
 * pauses; the child's end, recorded by the host, wakes it.
 */
export async function childResult(w: ChildWait): Promise<unknown> {
  const key = childEndKey(w.spawn);
  const end = w.journal.get<ChildEnd>(key);
  if (end) return outcomeOf(end, w.child.worker);
  const pending: PendingWait = {
    key,
    id: await waitId(key),
    kind: "child",
    name: w.child.worker,
    correlation: w.child.id,
    since: w.since,
    until: w.since + MAX_WAIT_MS,
    callPath: w.callPath,
    workerChain: [...w.workerChain],
  };
  await w.record?.(pending);
  throw new WaitRequired([pending]);
}

function outcomeOf(end: ChildEnd, worker: string): unknown {
  if (end.status === "succeeded") return end.output;
  const why = end.status === "cancelled" ? "was cancelled" : `failed: ${end.error?.message ?? "no reason given"}`;
  throw new ToolError(`the child run ${end.run} of ${worker} ${why}`);
}

/** `ctx.map`'s arguments, checked: the inputs (at most MAX_CHILDREN_PER_RUN) and the concurrency (1 to MAX_MAP_CONCURRENCY). */
export function checkedMap(inputs: unknown, concurrency: unknown): { inputs: readonly unknown[]; concurrency: number } {
  if (!Array.isArray(inputs)) throw new ToolError("ctx.map: inputs must be an array (one child run per input)");
  if (inputs.length > MAX_CHILDREN_PER_RUN) throw new ToolError(`ctx.map: ${inputs.length} inputs; a run may start at most ${MAX_CHILDREN_PER_RUN} child runs`);
  const c = concurrency ?? DEFAULT_MAP_CONCURRENCY;
  if (typeof c !== "number" || !Number.isInteger(c) || c < 1 || c > MAX_MAP_CONCURRENCY)
    throw new ToolError(`ctx.map: concurrency is a whole number from 1 to ${MAX_MAP_CONCURRENCY}`);
  return { inputs, concurrency: c };
}

/**
 * Runs `each` over `inputs`, at most `concurrency` at once, in input order: the i-th started is
 * input i, whatever order the earlier ones ended in (so a replay starts the same children under
 * the same keys). The results in input order; the first failure stops it taking more inputs and is its error.
 */
export async function mapped(inputs: readonly unknown[], concurrency: number, each: (input: unknown, i: number) => Promise<unknown>): Promise<unknown[]> {
  const results = new Array<unknown>(inputs.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < inputs.length) {
      const i = next++;
      try {
        results[i] = await each(inputs[i], i);
      } catch (err) {
        failed = true;
        throw err instanceof ToolError ? new ToolError(`ctx.map, input ${i}: ${err.message}`) : err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, lane));
  return results;
}
