import type * as z from "zod";
import { runIndex, runStub } from "./rpc";
import type { RunNotify, StartRun } from "./types";
import { catalog } from "../catalog";
import type { CatalogWorker } from "../engine";
import type { Attributes } from "../engine/attributes";
import { describeIssues, validatorFor } from "../engine/json-schema";
import { budgetOf, startInput, type budgetSchema } from "../engine/catalog/worker-file";

export { runIndex, runStub, type RunIndexRpc, type RunRpc } from "./rpc";

export const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A run as GET /runs/:id shows it, or null for an id that is not (or cannot be) a run. */
export const runView = async (env: Env, id: string) => (RUN_ID.test(id) ? runStub(env, id).status() : null);

/**
 * Why GET /runs/:id finds nothing: a run that retention deleted says so (its
 * tombstone is in the run index), anything else is unknown.
 */
export async function missingRun(env: Env, id: string): Promise<{ error: string } & Record<string, unknown>> {
  const gone = RUN_ID.test(id) ? await runIndex(env).tombstone(id) : null;
  if (!gone) return { error: `unknown run "${id}"` };
  const on = (ms: number) => new Date(ms).toISOString();
  return {
    error: `run "${id}" was deleted on ${on(gone.deleted_at)}: finished runs are retained for ${gone.retention_days} days (RUN_RETENTION_DAYS) and it finished on ${on(gone.finished_at)}`,
    deleted_at: gone.deleted_at,
    retention_days: gone.retention_days,
  };
}

export type StartProblem = { status: 404; error: string; known: string[] } | { status: 400 | 413; error: string };

/**
 * The most a run's input may take as stored JSON. A request body is at most 1 MiB,
 * but decoding can grow it (an invalid UTF-8 byte becomes U+FFFD, 3 bytes), and the
 * run's row must stay far below SQLite's 2 MB row limit.
 */
export const MAX_INPUT_BYTES = 1024 * 1024;

/**
 * Checks a start request against the catalog (worker or function exists, input
 * matches its schema — a function's own zod schema —, stored size bounded) before
 * anything is written. A bare string is accepted as `{input}` for workers with the
 * default input schema.
 */
export function checkStart(worker: string, input: unknown): { worker: CatalogWorker; input: unknown } | StartProblem {
  const w = catalog().get(worker);
  if (!w) return { status: 404, error: `unknown worker "${worker}"`, known: [...catalog().workers.keys()].sort() };
  const value = startInput(w, input);
  const parsed = (w.code?.input ?? validatorFor(w.input)).safeParse(value);
  if (!parsed.success) {
    return {
      status: 400,
      error: `input does not match the input schema of ${w.code ? w.file : `worker "${worker}" (${w.file})`}: ${describeIssues(parsed.error)}`,
    };
  }
  // A function gets its input as sent and parses it itself: a zod transform must run once.
  const accepted = w.code ? value : parsed.data;
  const stored = new TextEncoder().encode(JSON.stringify(accepted ?? null)).length;
  if (stored > MAX_INPUT_BYTES) return { status: 413, error: `the input is ${stored} bytes as stored JSON; at most ${MAX_INPUT_BYTES} bytes are accepted` };
  return { worker: w, input: accepted };
}

/** Starts (or, for a known id, finds) a run; the work happens in the run's alarm. */
export const startRun = (env: Env, req: StartRun) => runStub(env, req.id).start(req);

/** What every trigger kind says about the runs it starts. */
export interface TriggerRunSettings {
  approval_mode: StartRun["approvalMode"];
  budget?: z.output<typeof budgetSchema>;
}

/**
 * Starts (or finds) the run a trigger asked for, checked by `checkStart`: the
 * trigger's approval mode and budget, and what started it, for approvers to see.
 */
export const startTriggerRun = (
  env: Env,
  t: TriggerRunSettings,
  run: { id: string; checked: { worker: CatalogWorker; input: unknown }; trigger: Record<string, unknown>; notify?: RunNotify; attributes?: Attributes },
) =>
  startRun(env, {
    id: run.id,
    worker: run.checked.worker.name,
    input: run.checked.input,
    approvalMode: t.approval_mode,
    budget: budgetOf(t.budget),
    trigger: run.trigger,
    ...(run.notify ? { notify: run.notify } : {}),
    attributes: run.attributes,
  });
