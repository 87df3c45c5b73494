import { reachableWorkers } from "../catalog/reach";
import { messageOf, propagates, RunError } from "../errors";
import type { Journal } from "../journal/journal";
import { compensationKey, parseKey, undonePath } from "../journal/keys";
import { kindUndoes, type RecordedUndo } from "../toolsets/wrappers/compensable";
import type { Catalog } from "../types/catalog";
import type { Logger } from "../types/ports";
import type { CatalogWorker } from "../types/worker";
import { type CallServices, inFrame, openFrame } from "./call-frame";
import { toolContext } from "./context";
import type { UsageMeter } from "./usage";

/** Why the run failed, as recorded when it began undoing its effects. */
interface RecordedFailure {
  code: RunError["code"];
  message: string;
}

/**
 * A run that failed earlier and is undoing its effects fails again the same way without
 * running its body (a model that answered this time, or a transient failure gone, must
 * not let it go on after some effects were undone).
 */
export function failureBeingUndone(journal: Journal, root: string): RunError | undefined {
  const recorded = journal.get<RecordedFailure>(compensationKey(root));
  return recorded && new RunError(recorded.code, recorded.message);
}

/**
 * What a journal (its keys) holds of undos: `effects`, an effect a tool can undo (`<call>/undo`: a cancel
 * then undoes it before the run ends); `failing`, the run failed and is undoing them (`<root>/compensation`).
 */
export function undosRecorded(keys: Iterable<string>): { effects: boolean; failing: boolean } {
  const found = { effects: false, failing: false };
  for (const key of keys) {
    const kind = parseKey(key).kind;
    if (kind === "undo") found.effects = true;
    else if (kind === "compensation") found.failing = true;
  }
  return found;
}

/**
 * Whether a run of `root` may call a tool whose effect can be undone (it may record one at any step):
 * its worker or one it calls (`workers:`, transitively) has `compensate:`; a code function may call any.
 */
export function compensatesFrom(catalog: Pick<Catalog, "get" | "workers" | "kinds">, root: string): boolean {
  const compensates = (w: CatalogWorker) =>
    Object.values(w.toolsets).some((t) => {
      const kind = catalog.kinds.get(t.use);
      return t.compensate !== undefined || (kind !== undefined && kindUndoes(kind));
    });
  const reached = reachableWorkers(catalog, root);
  return (reached.some((w) => w.code) ? [...catalog.workers.values()] : reached).some(compensates);
}

/**
 * Undoes the effects the run made, newest first, after it failed with `failure` (recorded,
 * so a replay fails the same way) or was cancelled (no failure: the host says so each time): each
 * recorded undo (`<call>/undo`, toolsets/wrappers/compensable.ts) becomes a call of its
 * tool through its worker's toolset at `<call>/undone` — journaled (made once, across
 * evictions) and approval-gated like any call. An undo that fails is logged and the others
 * are still made. A pause for an approval propagates: the run waits, then fails the same
 * way and goes on where it stopped. Returns how many undos failed.
 */
export async function undoEffects(
  run: CallServices,
  log: Logger,
  usage: UsageMeter,
  workerNamed: (name: string) => CatalogWorker | undefined,
  root: string,
  failure: RunError | undefined,
): Promise<number> {
  const undos: Array<{ call: string; undo: RecordedUndo }> = [];
  for (const [key, value] of run.journal.entries()) {
    const p = parseKey(key);
    if (p.kind === "undo") undos.push({ call: p.call, undo: value as RecordedUndo });
  }
  if (!undos.length) return 0;
  const marker = compensationKey(root);
  if (failure && !run.journal.get(marker)) await run.journal.record<RecordedFailure>(marker, { code: failure.code, message: failure.message });
  let failed = 0;
  for (const { call, undo } of undos.reverse()) {
    const worker = workerNamed(undo.worker);
    const why = undo.error ?? (worker ? undefined : `worker "${undo.worker}" is no longer in the catalog`);
    if (why !== undefined || !worker) {
      failed++;
      log.warn("compensation_skipped", { call, tool: undo.of, reason: why });
      continue;
    }
    const frame = openFrame(run, worker, { path: undonePath(call), usage });
    try {
      await inFrame(run, frame, (toolset, state) =>
        toolset.callTool(undo.tool, undo.args ?? {}, toolContext(run, frame, toolset, frame.path, frame.usage, state)),
      );
    } catch (err) {
      if (propagates(err)) throw err;
      failed++;
      log.warn("compensation_failed", { call, tool: undo.tool, error: messageOf(err).slice(0, 300) });
    }
  }
  return failed;
}
