/**
 * One run of a bulk operation: cancel it, resume it, or fork it from its start. Each action is
 * safe to ask twice (after a restart mid-batch): a cancel refused because the run was cancelled
 * (by this operation before the restart, or meanwhile) counts as done; a resume only re-arms; a
 * fork's id derives from the operation and the run, so a second fork finds the first.
 */

import { messageOf } from "../../src/engine";
import { sha256Hex } from "../../src/engine/ids";
import { MAX_REASON_CHARS, type OperationSpec } from "../../src/operations/api";
import { FORK_FROM_START } from "../../src/runs/fork";
import { runStub } from "../../src/runs/rpc";
import type { RunStatusName } from "../../src/runs/types";

/** What became of one run: acted on, left alone (with why), failed (with why); or no answer, to try again later. */
export type Outcome = { state: "done" } | { state: "skipped" | "failed" | "retry"; reason: string };

const reason = (state: "skipped" | "failed" | "retry", text: string): Outcome => ({ state, reason: text.slice(0, MAX_REASON_CHARS) });
const GONE = "the run is gone (deleted after its retention)";

/** The fork an operation makes of a run: the same id on every attempt. */
export const forkIdFor = async (operation: string, run: string) => `fork-${(await sha256Hex(`${operation}\n${run}`)).slice(0, 32)}`;

/**
 * Acts on `runId`; `again`: this operation may have acted on it before a restart; `status`: the
 * filter's status, which the index may no longer hold for the run: a cancel checks it in the run's
 * own transaction (a run approved since it was listed as awaiting_approval is left alone).
 */
export async function actOn(
  env: Env,
  op: Pick<OperationSpec, "id" | "action" | "definitions">,
  runId: string,
  again: boolean,
  status?: RunStatusName,
): Promise<Outcome> {
  try {
    const run = runStub(env, runId);
    if (op.action === "cancel") {
      const a = await run.cancel(`bulk operation ${op.id}`, status ? [status] : undefined);
      if (a.ok) return { state: "done" };
      if (a.status === 404) return reason("skipped", GONE);
      if (again && (await run.status())?.status === "cancelled") return { state: "done" };
      return reason("skipped", a.error);
    }
    if (op.action === "resume") {
      const a = await run.resume();
      if (a.ok) return { state: "done" };
      return reason("skipped", a.status === 404 ? GONE : a.error);
    }
    const id = await forkIdFor(op.id, runId);
    const a = await runStub(env, id).fork({ id, source: runId, at: FORK_FROM_START, definitions: op.definitions });
    if (a.ok) return { state: "done" };
    return a.status === 404 ? reason("skipped", GONE) : reason("failed", a.error);
  } catch (err) {
    return reason("retry", `no answer from the run's object: ${messageOf(err)}`);
  }
}
