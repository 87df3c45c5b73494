import { executeRun, waitingFor, type EngineConfig } from "../engine/run/executor";
import { MemoryJournalStore } from "../engine/journal/memory-store";
import { callTree } from "../engine/journal/call-tree";
import { emptyUsage } from "../engine/run/usage";
import { startInput } from "../engine/catalog/worker-file";
import { runCheck, withDefaultStatus, type AskJudge, type CheckResult, type RunEvidence } from "./checks";
import type { EvalCase, EvalSuite } from "./suite";

export interface CaseResult {
  suite: string;
  name: string;
  worker: string;
  pass: boolean;
  status: RunEvidence["status"];
  checks: CheckResult[];
  turns: number;
  tokens: number;
  costUsd: number;
  ms: number;
}

/** How one case's run is set up: its engine (its model, the catalog with its stubs) under a run id whose stubs are registered. */
export interface CaseSetup {
  runId: string;
  config: EngineConfig;
  ask: AskJudge;
}

/**
 * Runs one case in this process through the engine, on an in-memory journal, then
 * checks what the journal shows (call tree, usage) and the outcome. A run that
 * throws or outlasts the suite's `timeout_s` is a failed case, never a crashed suite.
 */
export async function runCase(suite: EvalSuite, c: EvalCase, setup: CaseSetup): Promise<CaseResult> {
  const worker = (c.worker ?? suite.worker)!;
  const started = performance.now();
  const run = await evidence(suite, c, worker, setup);
  const checks: CheckResult[] = [];
  for (const check of withDefaultStatus(c.checks)) checks.push(await runCheck(check, run, setup.ask, suite.judge));
  return {
    suite: suite.file,
    name: c.name,
    worker,
    pass: checks.every((r) => r.pass),
    status: run.status,
    checks,
    turns: run.tree?.turns ?? 0,
    tokens: run.usage.inputTokens + run.usage.outputTokens,
    costUsd: run.usage.costUsd,
    ms: Math.round(performance.now() - started),
  };
}

async function evidence(suite: EvalSuite, c: EvalCase, worker: string, setup: CaseSetup): Promise<RunEvidence> {
  const store = new MemoryJournalStore();
  const base = { worker, input: c.input, output: null, usage: emptyUsage() };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let late = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      reject(new Error(`the run took over ${suite.timeout_s}s (timeout_s)`));
    }, suite.timeout_s * 1000);
  });
  // A run past its time takes no further step: no more model requests or tool calls spent on it.
  const beforeStep = () => {
    if (late) throw new Error("stopped: over timeout_s");
  };
  // A bare string is `{input}` for a worker with the default input schema, as POST /runs takes it.
  const callee = setup.config.catalog.get(worker);
  const input = callee ? startInput(callee, c.input) : c.input;
  try {
    const out = await Promise.race([
      executeRun({ ...setup.config, beforeStep }, store, { runId: setup.runId, worker, input, approvalMode: c.approval_mode ?? suite.approval_mode }),
      timeout,
    ]);
    const tree = callTree(store.entries);
    if (out.status === "succeeded") return { ...base, status: out.status, output: out.output, usage: out.usage, tree };
    if (out.status === "failed") return { ...base, status: out.status, error: `${out.error.code}: ${out.error.message}`, usage: out.usage, tree };
    // An eval's run is never cancelled (RunRequest.cancelled); said, should that change.
    if (out.status === "cancelled") return { ...base, status: "error", error: "the run was cancelled", usage: out.usage, tree };
    if (out.status === "waiting") {
      const waits = waitingFor(out)
        .map((w) => (w.name ? `${w.kind} ${w.name}` : w.kind))
        .join(", ");
      return { ...base, status: out.status, error: `it waits for ${waits} (an eval does not wait: stub the tool that waits)`, usage: out.usage, tree };
    }
    const asked = out.pending.map((p) => p.tool).join(", ");
    return { ...base, status: out.status, error: `it waits for approval of ${asked} (set approval_mode on the case)`, usage: out.usage, tree };
  } catch (err) {
    return { ...base, status: "error", error: err instanceof Error ? err.message : String(err), tree: callTree(store.entries) };
  } finally {
    clearTimeout(timer);
  }
}
