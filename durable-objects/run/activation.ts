/**
 * One activation of a run: replay its journal through the engine with this object's
 * ports, then record what it came to and arm the next alarm. Owns no table. Needs from
 * its host: `ctx` (transactions), `env`, `row`, `now`, `keyGrammar`, `wakeSoon`,
 * `setAlarm`; the test seams come in `ActivationSeams`.
 */

import { clearRunState, executeRun, isPaused, messageOf, RunError, RunInterrupted, StorageError, type Catalog, type RunOutcome } from "../../src/engine";
import type { Journal } from "../../src/engine/journal/journal";
import { emptyUsage } from "../../src/engine/run/usage";
import { deployedVersion, type Definitions } from "../../src/catalog";
import type { OtelVars } from "../../src/otel/exporter";
import { dispatchMode, engineConfig } from "../engine-config";
import { rpcGlobals } from "../global-toolsets-bridge";
import type { ModelDispatch } from "../model-dispatch";
import type { RunRow } from "../rows";
import { parse } from "../sql";
import type { SqliteStateBackend } from "../sqlite-state";
import type { RunAnswerMail } from "./answer-mail";
import { approvalTtlMs, type RunApprovals } from "./approvals";
import type { RunCatalog } from "./catalog";
import type { DeltaBuffer } from "./deltas";
import type { RunHost } from "./host";
import type { LoggedJournalStore } from "./log";
import { mailRun, type RunMail } from "./mail";
import type { RunPause } from "./pause";
import type { RunRecord } from "./record";
import { deletionDue } from "./retention";
import type { RunTracing } from "./tracing";
import type { RunVersions } from "./versions";
import type { RunWaits } from "./waits";

/** An alarm that keeps throwing is retried by the runtime; after this many the run fails. */
const MAX_ALARM_RETRIES = 5;

/** What RunDO lets a subclass change (the test pool's TestRunDO: tests/support/test-objects.ts). */
export interface ActivationSeams {
  /** How long one activation may run before it checkpoints. */
  budgetMs(): number;
  /** The OpenTelemetry variables (tracing.ts). */
  otelVars(): OtelVars;
  /** Before each step (after the cancel check). */
  stepStarting(key: string, journal: Journal): Promise<void>;
  /** After the engine returned an outcome, before it is recorded. */
  outcomeReached(): Promise<void>;
}

/** The parts of the run an activation drives. */
export interface ActivationParts {
  states: SqliteStateBackend;
  journal: LoggedJournalStore;
  record: RunRecord;
  pinned: RunCatalog;
  versions: RunVersions;
  approvals: RunApprovals;
  waits: RunWaits;
  mail: RunMail;
  pause: RunPause;
  /** Answers mailed back (a conversation by email): planned with the success, sent after it. */
  answers: Pick<RunAnswerMail, "plan" | "sendDue">;
  dispatch: ModelDispatch;
  deltas: DeltaBuffer;
  tracing: RunTracing;
}

type ActivationHost = Pick<RunHost, "ctx" | "env" | "row" | "now" | "keyGrammar" | "wakeSoon" | "setAlarm">;

export class RunActivation {
  /** The catalog of the activation in progress (the run's pinned one). */
  catalog: Catalog | undefined;
  private cancelled = false;

  constructor(
    private readonly host: ActivationHost,
    private readonly parts: ActivationParts,
    private readonly seams: ActivationSeams,
  ) {}

  /** A cancel: the activation in flight stops before its next step. */
  stop(): void {
    this.cancelled = true;
  }

  /** Replays the journal and continues the run until it ends, pauses or is interrupted. */
  async run(run: RunRow, retryCount: number): Promise<void> {
    const { record, versions, dispatch, pinned, states, tracing } = this.parts;
    if (this.host.row()!.status !== "running") record.running(); // an expiry recorded just now set it
    versions.activatedUnder(deployedVersion());
    this.cancelled = false;
    dispatch.begin();
    // The definitions the run started on; a deploy that cannot run them fails the run (no retry would help).
    const definitions = pinned.definitions(run.worker);
    if (definitions instanceof RunError) {
      record.outcome({ status: "failed", error: { code: definitions.code, message: definitions.message }, usage: parse(run.usage) ?? emptyUsage() });
      return clearRunState(states, run.id);
    }
    this.catalog = definitions.catalog;
    let outcome: RunOutcome;
    try {
      try {
        outcome = await this.execute(run, definitions);
      } catch (err) {
        if (err instanceof RunInterrupted) return await this.onInterrupted(err);
        outcome = failedUnexpectedly(run, err, retryCount);
      }
      tracing.outcome(run, outcome);
    } finally {
      tracing.flush(); // what this activation recorded, however it ended
    }
    await this.settle(outcome);
  }

  /** One pass of the engine over the run's journal, with this object's ports. */
  private async execute(run: RunRow, definitions: Definitions): Promise<RunOutcome> {
    const { host, seams } = this;
    const { states, journal, approvals, waits, mail, dispatch, deltas, tracing } = this.parts;
    const deadline = Date.now() + seams.budgetMs();
    const grammar = host.keyGrammar();
    const traced = tracing.observe(run, grammar, seams.otelVars(), journal, (key, j) => this.beforeStep(key, j, deadline));
    const config = engineConfig(
      host.env,
      {
        states,
        globals: rpcGlobals(() => host.env.GLOBAL_TOOLSETS.getByName("global") as never),
        beforeStep: traced.beforeStep,
        recordApproval: (pending) => host.ctx.storage.transactionSync(() => approvals.request(pending, Date.now(), approvalTtlMs(host.env))),
        recordWait: (wait) => waits.request(wait),
        notifier: (pending) => mail.requestApproval(pending, mailRun(run)),
      },
      definitions,
    );
    // Direct mode streams to watchers from here; queue mode hands model requests off (the consumer forwards their
    // text) and streams from here only a request it asks itself (nobody claimed the hand-off).
    const streaming = deltas.streaming(config.models);
    const models = dispatchMode(host.env) === "queue" ? dispatch.models(streaming, definitions.models, config.connections) : streaming;
    // Waits read the run's clock (a seam: the test pool moves it forward).
    const outcome = await executeRun({ ...config, models, clock: { now: () => host.now() } }, traced.store, {
      runId: run.id,
      worker: run.worker,
      input: parse(run.input),
      approvalMode: run.approval_mode,
      budget: parse(run.budget),
      keyGrammar: grammar,
    });
    await seams.outcomeReached();
    return outcome;
  }

  /** Checkpoint before the next step once the activation's wall-time budget is spent (after some progress). */
  private async beforeStep(key: string, journal: Journal, deadline: number): Promise<void> {
    if (this.cancelled) throw new RunInterrupted("cancelled");
    await this.seams.stepStarting(key, journal);
    if (journal.executed > 0 && Date.now() > deadline) throw new RunInterrupted("checkpoint");
  }

  /** An activation stopped on purpose: checkpointed, to retry later, handed off (queue mode), cancelled, or a test fault. */
  private async onInterrupted(err: RunInterrupted): Promise<void> {
    if (err.reason === "checkpoint") {
      this.parts.record.event("run_checkpoint", {});
      await this.host.wakeSoon();
    }
    if (err.reason === "retry") await this.retryLater(err.detail ?? "");
    if (err.reason === "fault") throw err;
    const at = err.reason === "dispatched" && this.host.row()?.status === "running" ? this.parts.dispatch.rearmAt() : null;
    if (at !== null) await this.host.setAlarm(at); // a lost hand-off or answer is sent again then
  }

  /** Records what the activation came to, and arms the run's next alarm: the pause's, or retention's. */
  private async settle(outcome: RunOutcome): Promise<void> {
    if (this.host.row()?.status !== "running") return; // cancelled while this activation ran
    const { record, pause, answers } = this.parts;
    record.outcome(outcome, () => answers.plan(outcome));
    if (isPaused(outcome)) return pause.arm(outcome);
    await answers.sendDue();
    await this.host.setAlarm(deletionDue(this.host.env, this.host.row()!.updated_at)); // retention: the ended run's one alarm
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure (one row: the event counts retries). */
  private async retryLater(detail: string): Promise<void> {
    const retries = (this.host.row()?.retries ?? 0) + 1;
    this.parts.record.event("run_retry", { detail, attempt: retries });
    const delay = Math.min(30_000 * 2 ** (retries - 1), 3_600_000);
    await this.host.setAlarm(Date.now() + delay);
  }
}

/**
 * Unexpected (storage, bug, bad config): rethrown so the runtime retries the alarm,
 * then the run fails visibly. A failure every retry would repeat (a permanent StorageError) fails it now.
 */
function failedUnexpectedly(run: RunRow, err: unknown, retryCount: number): RunOutcome {
  const permanent = err instanceof StorageError && err.permanent;
  if (!permanent && retryCount < MAX_ALARM_RETRIES) throw err;
  return {
    status: "failed",
    error: { code: err instanceof StorageError ? "storage" : "internal", message: messageOf(err) },
    usage: parse(run.usage) ?? emptyUsage(),
  };
}
