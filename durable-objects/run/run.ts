/**
 * RunDO, the Durable Object of one run. Owns the run's SQLite (schema.ts: `run`,
 * `journal`, `state`; `events` through record.ts, `approvals` and `approval_mail` through approvals.ts)
 * and its alarm. Its collaborators in this folder reach it through RunHost (host.ts);
 * its RPC methods delegate to them (controls.ts, view.ts, model-dispatch.ts).
 */

import { DurableObject } from "cloudflare:workers";
import { clearRunState, executeRun, isPaused, messageOf, RunError, RunInterrupted, StorageError, type Catalog, type RunOutcome } from "../../src/engine";
import type { Journal } from "../../src/engine/journal/journal";
import type { KeyGrammar } from "../../src/engine/journal/keys";
import { emptyUsage } from "../../src/engine/run/usage";
import { deployedVersion, type Definitions } from "../../src/catalog";
import { numberVar } from "../../src/config";
import type { ForkCopy, ForkRows, ForkRun, ForkSource, JournalStepView } from "../../src/runs/fork";
import type { OtelVars } from "../../src/otel/exporter";
import { waitIndex, type RunRpc } from "../../src/runs/rpc";
import {
  PAUSED,
  TERMINAL,
  type Answer,
  type DecisionRequest,
  type EmailReply,
  type ReplyRequest,
  type EventDelivery,
  type EventOutcome,
  type ModelDelta,
  type RunEvent,
  type RunStatusName,
  type RunView,
  type SentMessage,
  type StartRun,
} from "../../src/runs/types";
import { dispatchMode, engineConfig } from "../engine-config";
import { rpcGlobals } from "../global-toolsets-bridge";
import { armDispatchLapse, ModelDispatch, recordableAnswer, type ClaimedRequest } from "../model-dispatch";
import type { RunRow } from "../rows";
import { keyGrammarOf, migrateRun, RUN_CURRENT } from "../schema";
import { parse, Sql } from "../sql";
import { SqliteStateBackend } from "../sqlite-state";
import { RunAnswerMail } from "./answer-mail";
import { approvalTtlMs, RunApprovals } from "./approvals";
import { RunCatalog } from "./catalog";
import { RunControls } from "./controls";
import { RunConversation } from "./conversation";
import { DeltaBuffer } from "./deltas";
import { continueByEmail } from "./email-reply";
import { RunFork } from "./fork";
import type { RunHost } from "./host";
import { RunIndexSync } from "./index-sync";
import { LoggedJournalStore } from "./log";
import { RunMail, type MailRun } from "./mail";
import { RunRecord } from "./record";
import { deletionDue, finishedRunAlarm } from "./retention";
import { RunTracing } from "./tracing";
import { RunVersions } from "./versions";
import { RunReader } from "./view";
import { RunWaits } from "./waits";

/** An alarm that keeps throwing is retried by the runtime; after this many the run fails. */
const MAX_ALARM_RETRIES = 5;
/** How long one activation may run before it checkpoints (ACTIVATION_BUDGET_MS). */
const ACTIVATION_BUDGET_MS = 5 * 60_000;
/** A report the run index refused is sent again this much later. */
const INDEX_RETRY_MS = 30_000;

const mailRun = (run: RunRow): MailRun => ({ id: run.id, trigger: parse(run.trigger) });

/**
 * One run: its SQLite journal, approvals, events and run-scoped toolset state.
 * The run executes in `alarm()`, never in a request: each activation replays the
 * journal and continues; a pause for approval ends the activation with one alarm,
 * at the earliest expiry of what it waits for.
 *
 * Reading order: the RPC methods (one-line delegations), then the alarm and its
 * steps, the seams a subclass overrides, then the collaborators' host.
 */
export class RunDO extends DurableObject<Env> implements RunRpc {
  protected readonly sql: Sql;
  private readonly states: SqliteStateBackend;
  private readonly journal: LoggedJournalStore;
  private readonly approvals: RunApprovals;
  private readonly waits: RunWaits;
  private readonly index: RunIndexSync;
  /** Its events (and so its status) and outcomes. */
  private readonly record: RunRecord;
  private readonly pinned: RunCatalog;
  private readonly versions: RunVersions;
  private readonly mail: RunMail;
  private readonly controls: RunControls;
  private readonly conversation: RunConversation;
  /** A conversation by mail: the answers mailed back (answer-mail.ts). */
  private readonly answers: RunAnswerMail;
  private readonly reader: RunReader;
  private readonly forks: RunFork;
  /** Model text as it streams, for watchers of the run page (memory only). */
  private readonly deltas = new DeltaBuffer();
  /** MODEL_DISPATCH=queue: model requests handed to the queue, answers delivered back. */
  private readonly dispatch: ModelDispatch;
  /** OpenTelemetry spans of each activation, when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing.ts). */
  private readonly tracing: RunTracing;
  /** The catalog of the activation in progress (the run's pinned one). */
  private activeCatalog: Catalog | undefined;
  /** How the run's journal keys are written (schema.ts keyGrammarOf), read when first needed. */
  private grammar?: KeyGrammar;
  private cancelled = false;
  /** Retention deleted the run: this instance answers as for an unknown run. */
  private deleted = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateRun(this.sql);
    const host = this.host();
    this.states = new SqliteStateBackend(this.sql);
    this.journal = new LoggedJournalStore(this.sql);
    this.index = new RunIndexSync(host, this.indexRetryMs());
    this.approvals = new RunApprovals(host, this.journal);
    this.record = new RunRecord(host, this.index, this.approvals);
    this.waits = new RunWaits(host, this.journal);
    this.pinned = new RunCatalog(this.sql);
    this.versions = new RunVersions(this.sql);
    this.mail = new RunMail(host, this.approvals);
    this.dispatch = new ModelDispatch(host);
    this.journal.startedEarlier = (key) => this.dispatch.handedOffAt(key);
    this.tracing = new RunTracing(host);
    this.controls = new RunControls(host, {
      approvals: this.approvals,
      waits: this.waits,
      states: this.states,
      dispatch: this.dispatch,
      stopActivation: () => {
        this.cancelled = true;
      },
      cancelled: (run) => this.tracing.cancelled(run, this.keyGrammar, this.otelVars()),
    });
    this.conversation = new RunConversation(host, { journal: this.journal, pinned: this.pinned });
    this.answers = new RunAnswerMail(host, this.conversation);
    const { journal, pinned, versions, approvals, waits, conversation } = this;
    this.reader = new RunReader(host, { journal, pinned, versions, approvals, waits, conversation });
    this.forks = new RunFork(host, { pinned: this.pinned, start: (req, pinned) => this.controls.start(req, pinned) });
    void ctx.blockConcurrencyWhile(() => armDispatchLapse(host, this.dispatch));
  }

  // ——— RPC: what the app asks (src/runs/rpc.ts): controls.ts and view.ts ———

  async start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    return this.controls.start(req);
  }

  async decide(approvalId: string, d: DecisionRequest): Promise<Answer<{ approved: boolean }>> {
    return this.controls.decide(approvalId, d);
  }

  async decideByReply(mac: string, reply: ReplyRequest): Promise<Answer<{ approved: boolean }>> {
    return this.controls.decideByReply(mac, reply);
  }

  async cancel(): Promise<Answer<{ status: "cancelled" }>> {
    return this.controls.cancel();
  }

  async resume(): Promise<Answer<{ status: RunStatusName }>> {
    return this.controls.resume();
  }

  async deliverEvent(ev: EventDelivery, buffer: boolean): Promise<Answer<EventOutcome>> {
    return this.controls.deliverEvent(ev, buffer);
  }

  /** `POST /runs/:id/messages`: the next message of a finished run's conversation (conversation.ts); `id`: the same id again adds none. */
  async sendMessage(text: string, id?: string): Promise<Answer<SentMessage>> {
    return this.conversation.send(text, { id });
  }

  /** A reply to one of the run's answer mails: `mac` from our Message-ID it names (email-reply.ts). */
  async continueByEmail(mac: string, reply: EmailReply): Promise<Answer<SentMessage>> {
    return continueByEmail(this.host(), this.conversation, mac, reply);
  }

  async status(): Promise<RunView | null> {
    return this.reader.status();
  }

  /** `GET /runs/:id/workers/:name` */
  async createdWorker(name: string): Promise<Answer<{ text: string }>> {
    return this.reader.createdWorker(name);
  }

  async eventsSince(cursor = "0-0", limit = 200): Promise<{ events: RunEvent[]; done: boolean } | null> {
    return this.reader.eventsSince(cursor, limit);
  }

  /** Model text streamed after cursor `seq` (not persisted; see DeltaBuffer). */
  async deltasSince(seq = 0): Promise<{ deltas: ModelDelta[]; next: number }> {
    return this.deltas.since(seq);
  }

  /** `GET /runs/:id/journal` */
  async journalSteps(after: number, limit: number): Promise<{ steps: JournalStepView[]; next: number | null } | null> {
    return this.reader.journalSteps(after, limit);
  }

  // ——— RPC: forking (fork.ts): `fork` asked of the new run, the others of its source ———

  async fork(req: ForkRun): Promise<Answer<{ status: RunStatusName; created: boolean; copied: ForkCopy }>> {
    return this.forks.fork(req);
  }

  async forkSource(at: string): Promise<Answer<{ source: ForkSource }>> {
    return this.forks.source(at);
  }

  async forkRows(atSeq: number, after: number): Promise<Answer<ForkRows>> {
    return this.forks.rows(atSeq, after);
  }

  // ——— RPC: the model-request queue's consumer (model-consumer.ts; model-dispatch.ts) ———

  /** MODEL_DISPATCH=queue: the consumer takes a handed-off request, once (null: nothing to do). */
  async claimModelRequest(key: string, attempt: number): Promise<ClaimedRequest | null> {
    const claimed = this.live() ? await this.dispatch.claim(key, attempt) : null;
    if (claimed) this.deltas.claimed(key, attempt);
    return claimed;
  }

  /**
   * The claim holder's model text so far (delta-forwarder.ts): kept in memory for the
   * run page, nothing written. `watched`: whether a page read pieces lately.
   */
  async forwardModelText(key: string, attempt: number, n: number, text: string): Promise<{ watched: boolean }> {
    if (typeof text !== "string" || !this.live()) return { watched: false };
    this.deltas.forwarded(key, attempt, n, text);
    return { watched: this.deltas.watched() };
  }

  /** The consumer holding a claim is alive (it renews while the model thinks); false: stop, nobody wants the answer. */
  async renewModelClaim(key: string, attempt: number): Promise<boolean> {
    return this.live() && this.dispatch.renew(key, attempt);
  }

  /** The consumer's answer to a claimed request; recorded once, then the run wakes to record it in its journal. */
  async deliverModelAnswer(key: string, attempt: number, answer: unknown): Promise<{ recorded: boolean }> {
    const recorded = this.live() && (await this.dispatch.deliver(key, attempt, recordableAnswer(answer)));
    this.deltas.delivered(key);
    return { recorded };
  }

  // ——— The alarm: one activation, or retention, or a paused run's follow-ups ———

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    const run = this.row();
    if (!run) return;
    await this.index.flush();
    await this.answers.sendDue();
    if (TERMINAL.includes(run.status)) return this.finishRetention();
    if (PAUSED.includes(run.status) && (await this.stillPaused(run))) return;
    await this.activate(run, info?.retryCount ?? 0);
  }

  /** An ended run's one alarm: delete it when its retention is over (retention.ts). */
  private async finishRetention(): Promise<void> {
    this.deleted = await finishedRunAlarm(this.host());
  }

  /**
   * A paused run's alarm comes at its earliest approval expiry, follow-up email or
   * wait's deadline, or from a decision, an event or a resume: records the expired
   * rejections and the waits that ended; while nothing was decided or ended, sends the
   * follow-ups due and re-arms (true). False: replay.
   */
  private async stillPaused(run: RunRow): Promise<boolean> {
    const now = this.now();
    this.ctx.storage.transactionSync(() => {
      this.approvals.expireDue(now);
      this.waits.endDue(now);
    });
    if (!PAUSED.includes(this.row()!.status) || (this.approvals.earliestExpiry() === null && this.waits.nextDeadline() === null)) return false;
    await this.mail.sendFollowUps(mailRun(run));
    await this.armPause({ pending: [], waits: [] });
    return true;
  }

  /** Replays the journal and continues the run until it ends, pauses or is interrupted. */
  private async activate(run: RunRow, retryCount: number): Promise<void> {
    if (this.row()!.status !== "running") this.record.running(); // an expiry recorded just now set it
    this.versions.activatedUnder(deployedVersion());
    this.cancelled = false;
    this.dispatch.begin();
    // The definitions the run started on; a deploy that cannot run them fails the run (no retry would help).
    const definitions = this.pinned.definitions(run.worker);
    if (definitions instanceof RunError) {
      this.record.outcome({ status: "failed", error: { code: definitions.code, message: definitions.message }, usage: parse(run.usage) ?? emptyUsage() });
      return clearRunState(this.states, run.id);
    }
    this.activeCatalog = definitions.catalog;
    let outcome: RunOutcome;
    try {
      try {
        outcome = await this.execute(run, definitions);
      } catch (err) {
        if (err instanceof RunInterrupted) return await this.onInterrupted(err);
        outcome = this.failedUnexpectedly(run, err, retryCount);
      }
      this.tracing.outcome(run, outcome);
    } finally {
      this.tracing.flush(); // what this activation recorded, however it ended
    }
    await this.settle(outcome);
  }

  /** One pass of the engine over the run's journal, with this object's ports. */
  private async execute(run: RunRow, definitions: Definitions): Promise<RunOutcome> {
    const deadline = Date.now() + this.activationBudgetMs();
    const traced = this.tracing.observe(run, this.keyGrammar, this.otelVars(), this.journal, (key, journal) => this.beforeStep(key, journal, deadline));
    const config = engineConfig(
      this.env,
      {
        states: this.states,
        globals: rpcGlobals(() => this.env.GLOBAL_TOOLSETS.getByName("global") as never),
        beforeStep: traced.beforeStep,
        recordApproval: (pending) => this.ctx.storage.transactionSync(() => this.approvals.request(pending, Date.now(), approvalTtlMs(this.env))),
        recordWait: (wait) => this.waits.request(wait),
        notifier: (pending) => this.mail.requestApproval(pending, mailRun(run)),
      },
      definitions,
    );
    // Direct mode streams to watchers from here; queue mode hands model requests off (the consumer forwards their
    // text) and streams from here only a request it asks itself (nobody claimed the hand-off).
    const streaming = this.deltas.streaming(config.models);
    const models = dispatchMode(this.env) === "queue" ? this.dispatch.models(streaming, definitions.models) : streaming;
    // Waits read the run's clock (a seam: the test pool moves it forward).
    const outcome = await executeRun({ ...config, models, clock: { now: () => this.now() } }, traced.store, {
      runId: run.id,
      worker: run.worker,
      input: parse(run.input),
      approvalMode: run.approval_mode,
      budget: parse(run.budget),
      keyGrammar: this.keyGrammar,
    });
    await this.outcomeReached();
    return outcome;
  }

  /** Checkpoint before the next step once the activation's wall-time budget is spent (after some progress). */
  private async beforeStep(key: string, journal: Journal, deadline: number): Promise<void> {
    if (this.cancelled) throw new RunInterrupted("cancelled");
    await this.stepStarting(key, journal);
    if (journal.executed > 0 && Date.now() > deadline) throw new RunInterrupted("checkpoint");
  }

  /** An activation stopped on purpose: checkpointed, to retry later, handed off (queue mode), cancelled, or a test fault. */
  private async onInterrupted(err: RunInterrupted): Promise<void> {
    if (err.reason === "checkpoint") {
      this.record.event("run_checkpoint", {});
      await this.wakeSoon();
    }
    if (err.reason === "retry") await this.retryLater(err.detail ?? "");
    if (err.reason === "fault") throw err;
    const at = err.reason === "dispatched" && this.row()?.status === "running" ? this.dispatch.rearmAt() : null;
    if (at !== null) await this.setAlarm(at); // a lost hand-off or answer is sent again then
  }

  /**
   * Unexpected (storage, bug, bad config): rethrown so the runtime retries the alarm,
   * then the run fails visibly. A failure every retry would repeat (a permanent StorageError) fails it now.
   */
  private failedUnexpectedly(run: RunRow, err: unknown, retryCount: number): RunOutcome {
    const permanent = err instanceof StorageError && err.permanent;
    if (!permanent && retryCount < MAX_ALARM_RETRIES) throw err;
    return {
      status: "failed",
      error: { code: err instanceof StorageError ? "storage" : "internal", message: messageOf(err) },
      usage: parse(run.usage) ?? emptyUsage(),
    };
  }

  /** Records what the activation came to, and arms the run's next alarm: the pause's, or retention's. */
  private async settle(outcome: RunOutcome): Promise<void> {
    if (this.row()?.status !== "running") return; // cancelled while this activation ran
    this.record.outcome(outcome, () => this.answers.plan(outcome));
    if (isPaused(outcome)) return this.armPause(outcome);
    await this.answers.sendDue();
    await this.setAlarm(deletionDue(this.env, this.row()!.updated_at)); // retention: the ended run's one alarm
  }

  /**
   * One alarm per pause: at the earliest of the pending approvals' expiries and
   * follow-up emails and the waits' deadlines (so what nobody answers ends then); at
   * once if a decision landed or a wait ended meanwhile, or ends now (an event kept
   * for it, a time already past): the run is then marked running, the alarm must replay.
   * Waits a signal trigger can end are registered with the correlation index first.
   */
  private async armPause(paused: Pick<Extract<RunOutcome, { waits: unknown }>, "pending" | "waits">): Promise<void> {
    const ended = this.ctx.storage.transactionSync(() => this.waits.endDue(this.now()));
    if (ended || this.approvals.anyResolved(paused.pending.map((p) => p.id)) || this.waits.anyEnded(paused.waits.map((w) => w.id))) {
      if (this.row()!.status !== "running") this.record.running();
      return this.wakeSoon();
    }
    const registered = await this.registerCorrelated();
    const times = [this.approvals.nextWakeUp(), this.waits.nextDeadline(), registered ? null : Date.now() + this.indexRetryMs()];
    const due = times.filter((t): t is number => t !== null);
    if (due.length) await this.setAlarm(Math.min(...due));
  }

  /**
   * Tells the correlation index (one object per event and key) which runs a signal may
   * wake; idempotent, so sent at every pause. False when an index object could not be
   * reached: the pause's alarm comes sooner and sends it again (the run keeps waiting).
   */
  private async registerCorrelated(): Promise<boolean> {
    const runId = this.row()!.id;
    try {
      await Promise.all(this.waits.correlated().map(async (w) => (await waitIndex(this.env, w.name!, w.correlation!)).register(runId, w.id, w.until)));
      return true;
    } catch {
      this.record.noted("wait_index_failed", {});
      return false;
    }
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure (one row: the event counts retries). */
  private async retryLater(detail: string): Promise<void> {
    const retries = (this.row()?.retries ?? 0) + 1;
    this.record.event("run_retry", { detail, attempt: retries });
    const delay = Math.min(30_000 * 2 ** (retries - 1), 3_600_000);
    await this.setAlarm(Date.now() + delay);
  }

  // ——— Seams a subclass may override (the test pool's TestRunDO does: tests/support/test-run-do.ts) ———

  /** How long one activation may run before it checkpoints. */
  protected activationBudgetMs(): number {
    return numberVar(this.env, "ACTIVATION_BUDGET_MS", ACTIVATION_BUDGET_MS);
  }

  /** How long a failed report to the run index waits before it is sent again. */
  protected indexRetryMs(): number {
    return INDEX_RETRY_MS;
  }

  /** The OpenTelemetry variables (tracing.ts): the Worker's vars and secrets. */
  protected otelVars(): OtelVars {
    return this.env as OtelVars;
  }

  /** Before each step of an activation (after the cancel check). */
  protected async stepStarting(_key: string, _journal: Journal): Promise<void> {}

  /** After the engine returned an outcome, before it is recorded. */
  protected async outcomeReached(): Promise<void> {}

  /** The time waits are measured by (timers, timeouts, the engine's clock). */
  protected now(): number {
    return Date.now();
  }

  /** Arms the alarm to run the next activation now. */
  protected async wakeSoon(): Promise<void> {
    await this.setAlarm(Date.now());
  }

  /** Every alarm goes through here (brought forward to a pending index retry or answer mail). */
  protected async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(this.answers.clamp(this.index.clamp(at)));
  }

  // ——— The run's row, and the collaborators' host ———

  private get keyGrammar(): KeyGrammar {
    return (this.grammar ??= keyGrammarOf(this.sql));
  }

  private live(): boolean {
    const status = this.row()?.status;
    return status !== undefined && !TERMINAL.includes(status);
  }

  private row(): RunRow | undefined {
    return this.deleted ? undefined : this.sql.one<RunRow>`SELECT * FROM ${RUN_CURRENT} AS run_current`;
  }

  /** What the collaborators may use of this object (host.ts): never an RPC method. */
  private host(): RunHost {
    return {
      ctx: this.ctx,
      env: this.env,
      sql: this.sql,
      event: (type, data) => this.record.event(type, data),
      noted: (type, data) => this.record.noted(type, data),
      wakeSoon: () => this.wakeSoon(),
      setAlarm: (at) => this.setAlarm(at),
      now: () => this.now(),
      activeCatalog: () => this.activeCatalog,
      row: () => this.row(),
      keyGrammar: () => this.keyGrammar,
    };
  }
}
