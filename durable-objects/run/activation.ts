/**
 * One activation of a run: replay its journal through the engine with this object's
 * ports, then record what it came to (through the lifecycle, which refuses it for a run
 * cancelled meanwhile) and arm the next alarm. Owns no table. Needs from its host: `ctx`
 * (transactions), `env`, `row`, `now`, `keyGrammar`, `wakeSoon`, `arm` and `io` (every
 * model request, global tool call and notification goes through it); the test seams
 * come in `ActivationSeams`.
 */

import {
  clearRunState,
  executeRun,
  isPaused,
  messageOf,
  RunError,
  RunInterrupted,
  StorageError,
  type Catalog,
  type ModelResolver,
  type RunOutcome,
} from "../../src/engine";
import type { Journal } from "../../src/engine/journal/journal";
import { emptyUsage } from "../../src/engine/run/usage";
import { deployedVersion, type Definitions } from "../../src/catalog";
import type { OtelVars } from "../../src/otel/exporter";
import { TERMINAL } from "../../src/runs/types";
import { dispatchMode, engineConfig } from "../engine-config";
import type { ConnectionSlots } from "../../src/engine/net/connection-slots";
import { rpcGlobals, type GlobalToolsetsStub } from "../global-toolsets-bridge";
import type { ModelDispatch } from "../model-dispatch";
import type { RunRow } from "../rows";
import { parse } from "../sql";
import type { SqliteStateBackend } from "../sqlite-state";
import type { RunAnswerMail } from "./answer-mail";
import { approvalTtlMs, type RunApprovals } from "./approvals";
import type { RunCatalog } from "./catalog";
import type { DeltaBuffer } from "./deltas";
import type { RunHost } from "./host";
import type { RunLifecycle } from "./lifecycle";
import type { LoggedJournalStore } from "./log";
import { mailRun, type RunMail } from "./mail";
import type { RunSlack } from "./slack";
import type { RunOutbox } from "./outbox";
import type { RunPause } from "./pause";
import type { RunRecord } from "./record";
import { deletionDue } from "./retention";
import type { RunTracing } from "./tracing";
import type { RunVersions } from "./versions";
import type { RunWaits } from "./waits";
import type { RunChildren } from "./children";
import type { Schedules } from "../../src/engine/types/schedule";
import { createSchedule } from "../../src/schedules/create";

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
  lifecycle: Pick<RunLifecycle, "activate" | "settle" | "status" | "cancelRequested">;
  record: Pick<RunRecord, "event">;
  pinned: RunCatalog;
  versions: RunVersions;
  approvals: RunApprovals;
  waits: RunWaits;
  mail: RunMail;
  slack: RunSlack;
  pause: RunPause;
  /** Answers mailed back (a conversation by email): planned with the success, sent after it. */
  answers: Pick<RunAnswerMail, "plan" | "sendDue">;
  /** The end's notifications: planned with it (lifecycle hooks), sent after it. */
  outbox: Pick<RunOutbox, "sendDue">;
  dispatch: ModelDispatch;
  deltas: DeltaBuffer;
  tracing: RunTracing;
  children: RunChildren;
}

type ActivationHost = Pick<RunHost, "ctx" | "env" | "row" | "now" | "keyGrammar" | "wakeSoon" | "arm" | "io">;

export class RunActivation {
  /** The catalog of the activation in progress (the run's pinned one). */
  catalog: Catalog | undefined;
  private cancelled = false;
  private inFlight = false;
  /** The activation in progress's line of connections (engine-config.ts): a cancel closes it. */
  private connections: ConnectionSlots | undefined;

  constructor(
    private readonly host: ActivationHost,
    private readonly parts: ActivationParts,
    private readonly seams: ActivationSeams,
  ) {}

  /** A cancel: the activation in flight stops before its next step. */
  stop(): void {
    this.cancelled = true;
    // A call waiting for one of the activation's connections has passed its cancel check: it must not go out now.
    this.connections?.close(new RunInterrupted("cancelled"));
  }

  /** Replays the journal and continues the run until it ends, pauses or is interrupted. */
  async run(run: RunRow, retryCount: number): Promise<void> {
    const { lifecycle, versions, pinned, states, tracing } = this.parts;
    if (!lifecycle.activate().ok) return; // it ended: nothing runs
    this.cancelled = false;
    // Read after the last await: a cancel that asked the run to undo its effects makes this activation the one that does.
    const cancel = lifecycle.cancelRequested();
    versions.activatedUnder(deployedVersion());
    // The definitions the run started on; a deploy that cannot run them fails the run (no retry would help).
    const definitions = pinned.definitions(run.worker);
    if (definitions instanceof RunError) {
      await clearRunState(states, run.id);
      return this.settle(
        { status: "failed", error: { code: definitions.code, message: definitions.message }, usage: parse(run.usage) ?? emptyUsage() },
        cancel,
      );
    }
    this.catalog = definitions.catalog;
    let outcome: RunOutcome;
    this.inFlight = true;
    try {
      try {
        outcome = await this.execute(run, definitions, cancel);
      } catch (err) {
        if (err instanceof RunInterrupted) return await this.onInterrupted(err);
        outcome = failedUnexpectedly(run, err, retryCount);
      }
      tracing.outcome(run, outcome);
    } finally {
      this.inFlight = false;
      tracing.flush(); // what this activation recorded, however it ended
    }
    await this.settle(outcome, cancel);
  }

  /** Whether an activation is running the run's body (a cancel then may meet an effect recorded after it). */
  running(): boolean {
    return this.inFlight;
  }

  /** One pass of the engine over the run's journal, with this object's ports. */
  private async execute(run: RunRow, definitions: Definitions, cancel: { reason?: string } | undefined): Promise<RunOutcome> {
    const { host, seams } = this;
    const { states, journal, approvals, waits, mail, slack, dispatch, deltas, tracing } = this.parts;
    const deadline = Date.now() + seams.budgetMs();
    const grammar = host.keyGrammar();
    const traced = tracing.observe(run, grammar, seams.otelVars(), journal, (key, j) => this.beforeStep(key, j, deadline));
    const config = engineConfig(
      host.env,
      {
        states,
        globals: rpcGlobals(() => {
          const singleton = host.env.GLOBAL_TOOLSETS.getByName("global") as unknown as GlobalToolsetsStub;
          return { callTool: (call, bridge) => host.io("global.call", () => singleton.callTool(call, bridge)) };
        }),
        beforeStep: traced.beforeStep,
        recordApproval: (pending) => {
          // A cancel answered while this step awaited: nobody is asked (its voiding of approvals is behind us).
          if (this.cancelled) throw new RunInterrupted("cancelled");
          host.ctx.storage.transactionSync(() => approvals.request(pending, Date.now(), approvalTtlMs(host.env)));
        },
        recordWait: (wait) => waits.request(wait),
        // One step for every channel: its value records the email's outcome and the Slack message's (a replay sends neither again).
        notifier: (pending) =>
          host.io("approval.email", async () => {
            const mailed = await mail.requestApproval(pending, mailRun(run));
            const posted = await slack.requestApproval(pending, mailRun(run), mailed.expires_at);
            return posted ? { ...mailed, slack: posted } : mailed;
          }),
        schedules: runSchedules(host, run.id, run.approval_mode),
        children: this.parts.children.port(run),
      },
      definitions,
    );
    this.connections = config.connections;
    // Direct mode streams to watchers from here; queue mode hands model requests off (the consumer forwards their
    // text) and streams from here only a request it asks itself (nobody claimed the hand-off).
    const streaming = deltas.streaming(this.asked(config.models));
    const models = dispatchMode(host.env) === "queue" ? dispatch.models(streaming, definitions.models, config.connections) : streaming;
    // Waits read the run's clock (a seam: the test pool moves it forward).
    const outcome = await executeRun({ ...config, models, clock: { now: () => host.now() } }, traced.store, {
      runId: run.id,
      worker: run.worker,
      input: parse(run.input),
      approvalMode: run.approval_mode,
      budget: parse(run.budget),
      keyGrammar: grammar,
      attributes: parse(run.attributes) ?? {},
      parentDepth: this.parts.children.parent()?.depth ?? 0,
      ...(cancel ? { cancelled: cancel } : {}),
    });
    await host.io("activation.outcome", () => seams.outcomeReached());
    return outcome;
  }

  /** The models as the engine asks them: each request the object makes itself goes through the `model.request` seam. */
  private asked(models: ModelResolver): ModelResolver {
    return (name) => {
      const model = models(name);
      return { ...model, request: (req) => this.host.io("model.request", () => model.request(req)) };
    };
  }

  /**
   * Before each step: stop for a cancel (checked after the step's last await, so no step starts
   * after a cancel answered), and checkpoint once the activation's wall-time budget is spent (after some progress).
   */
  private async beforeStep(key: string, journal: Journal, deadline: number): Promise<void> {
    await this.host.io("activation.step", () => this.seams.stepStarting(key, journal));
    if (this.cancelled) throw new RunInterrupted("cancelled");
    if (journal.executed > 0 && Date.now() > deadline) throw new RunInterrupted("checkpoint");
  }

  /** An activation stopped on purpose: checkpointed, to retry later, handed off (queue mode), cancelled, or a test fault. */
  private async onInterrupted(err: RunInterrupted): Promise<void> {
    if (err.reason === "fault") throw err;
    // Cancelled (for this stop, or meanwhile): nothing follows; the cancel armed retention.
    if (this.parts.lifecycle.status() !== "running") return;
    if (err.reason === "checkpoint") {
      this.parts.record.event("run_checkpoint", {});
      return this.host.wakeSoon();
    }
    if (err.reason === "retry") return this.retryLater(err.detail ?? "");
    // A lost hand-off or answer is sent again then; an answer delivered meanwhile asked its own wake-up, which `arm` keeps.
    if (err.reason === "dispatched") return this.host.arm(this.parts.dispatch.rearmAt());
  }

  /** Records what the activation came to, and arms the run's next alarm: the pause's, or retention's. */
  private async settle(reached: RunOutcome, cancel: { reason?: string } | undefined): Promise<void> {
    const { lifecycle, pause, answers, outbox, slack } = this.parts;
    // A run undoing its effects after a cancel ends cancelled however its undos went (one that failed is named).
    const outcome: RunOutcome =
      cancel && reached.status === "failed"
        ? { status: "cancelled", ...cancel, note: `its effects could not be undone: ${reached.error.message}`, usage: reached.usage }
        : reached;
    const moved = lifecycle.settle(outcome, cancel !== undefined, () => answers.plan(outcome));
    if (!moved.ok) return; // cancelled while this activation ran
    if (isPaused(outcome)) return pause.arm(outcome);
    // A message waited for this answer: the run took it, and answers it next.
    if (moved.continued) await this.host.wakeSoon();
    await this.host.io("settle.answer-mail", async () => {
      await answers.sendDue();
      await slack.postAnswer(); // a Slack thread's answer, as a mail conversation's
    });
    await this.host.io("settle.outbox", () => outbox.sendDue());
    // Read after the await: a message that came meanwhile made the run running again, and asked its wake-up.
    const run = this.host.row()!;
    if (TERMINAL.includes(run.status)) await this.host.arm(deletionDue(this.host.env, run.updated_at)); // retention: the ended run's one alarm
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure (one row: the event counts retries). */
  private async retryLater(detail: string): Promise<void> {
    const retries = (this.host.row()?.retries ?? 0) + 1;
    this.parts.record.event("run_retry", { detail, attempt: retries });
    const delay = Math.min(30_000 * 2 ** (retries - 1), 3_600_000);
    await this.host.arm(Date.now() + delay);
  }
}

/** Where `ctx.schedule` makes schedules: their objects, through the `schedule.create` seam (a refusal is a value; no answer throws: the engine retries the run). */
function runSchedules(host: Pick<RunHost, "env" | "io">, run: string, mode: RunRow["approval_mode"]): Schedules {
  return {
    async create(id, spec) {
      const made = await host.io("schedule.create", () =>
        createSchedule(host.env, id, spec, { created_by: { kind: "run", run }, creator_approval_mode: mode }),
      );
      return made.ok ? { ok: true, id, next_fire_at: made.view.next_fire_at } : { ok: false, error: made.error };
    },
  };
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
