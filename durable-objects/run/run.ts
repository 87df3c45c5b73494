/**
 * RunDO, the Durable Object of one run. Owns the run's SQLite (schema.ts: `run`,
 * `journal`, `events`, `state`; `approvals` and `approval_mail` through approvals.ts)
 * and its alarm. Its collaborators in this folder reach it through RunHost (host.ts).
 */

import { DurableObject } from "cloudflare:workers";
import {
  clearRunState,
  executeRun,
  messageOf,
  RunError,
  RunInterrupted,
  StorageError,
  type Catalog,
  type PendingApproval,
  type RunOutcome,
} from "../../src/engine";
import { findCreation, workerFileText } from "../../src/engine/run/created-workers";
import { callTree } from "../../src/engine/journal/call-tree";
import { journalUsage } from "../../src/engine/journal/run-usage";
import type { Journal } from "../../src/engine/journal/journal";
import type { KeyGrammar } from "../../src/engine/journal/keys";
import { emptyUsage } from "../../src/engine/run/usage";
import { sameSecret } from "../../src/security/constant-time";
import { replyMac } from "../../src/tokens/reply-reference";
import type { Definitions } from "../../src/catalog";
import { numberVar } from "../../src/config";
import { snapshotFor } from "../../src/pinned-catalog";
import type { RunRpc } from "../../src/runs/rpc";
import {
  TERMINAL,
  type Answer,
  type DecisionRequest,
  type ModelDelta,
  type RunEvent,
  type RunStatusName,
  type RunView,
  type StartRun,
} from "../../src/runs/types";
import { dispatchMode, engineConfig } from "../engine-config";
import { rpcGlobals } from "../global-toolsets-bridge";
import { deliveredAnswer, ModelDispatch, type ClaimedRequest, type DeliveredAnswer } from "../model-dispatch";
import type { EventRow, JournalRow, RunRow } from "../rows";
import { keyGrammarOf, migrateRun, RUN_CURRENT } from "../schema";
import { json, parse, Sql } from "../sql";
import { SqliteStateBackend } from "../sqlite-state";
import { approvalTtlMs, RunApprovals, runEnded } from "./approvals";
import { catalogColumns, RunCatalog } from "./catalog";
import { DeltaBuffer } from "./deltas";
import { mergeEvents } from "./events";
import type { RunHost } from "./host";
import { RunIndexSync } from "./index-sync";
import { LoggedJournalStore, logRunEvent } from "./log";
import { RunMail, type MailRun } from "./mail";
import { deletionDue, finishedRunAlarm, tombstoneOf } from "./retention";
import { shownUsage } from "./usage";

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
 * Reading order: the RPC methods the app calls (start, decide, cancel, status…),
 * then the alarm and its steps, then the collaborators' host.
 */
export class RunDO extends DurableObject<Env> implements RunRpc {
  protected readonly sql: Sql;
  private readonly states: SqliteStateBackend;
  private readonly journal: LoggedJournalStore;
  private readonly approvals: RunApprovals;
  private readonly index: RunIndexSync;
  private readonly pinned: RunCatalog;
  private readonly mail: RunMail;
  /** Model text as it streams, for watchers of the run page (memory only). */
  private readonly deltas = new DeltaBuffer();
  /** MODEL_DISPATCH=queue: model requests handed to the queue, answers delivered back. */
  private readonly dispatch: ModelDispatch;
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
    this.pinned = new RunCatalog(this.sql);
    this.mail = new RunMail(host, this.approvals);
    this.dispatch = new ModelDispatch(host);
    void ctx.blockConcurrencyWhile(() => this.armDispatchLapse());
  }

  // ——— RPC: what the app asks (src/runs/rpc.ts) ———

  /** Stores the run and arms the alarm. Idempotent: a second start returns the first. */
  async start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    const snapshot = await snapshotFor(req.worker); // before the check: no await between it and the insert
    const deleted = tombstoneOf(this.ctx);
    if (deleted) return { id: req.id, status: deleted.status, created: false };
    const existing = this.row();
    if (existing) return { id: existing.id, status: existing.status, created: false };
    const now = Date.now();
    const catalog = catalogColumns(snapshot);
    this.ctx.storage.transactionSync(() => {
      this.sql.run`INSERT INTO run (id, worker, input, status, approval_mode, budget, trigger, created_at, updated_at, catalog_version, catalog_files)
        VALUES (${req.id}, ${req.worker}, ${json(req.input)}, 'queued', ${req.approvalMode}, ${json(req.budget)}, ${json(req.trigger)}, ${now}, ${now}, ${catalog.version}, ${catalog.files})`;
      this.event("run_queued", { worker: req.worker });
    });
    await this.wakeSoon();
    return { id: req.id, status: "queued", created: true };
  }

  /** Records a decision in the journal and wakes the run; replay carries it past the approval. */
  async decide(approvalId: string, d: DecisionRequest): Promise<Answer<{ approved: boolean }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { answer, recorded } = this.ctx.storage.transactionSync(() => this.approvals.decide(approvalId, d, run.status, Date.now()));
    if (recorded) await this.wakeSoon();
    return answer;
  }

  /**
   * A decision by emailed reply: the reference's MAC names one approval of this run
   * (checked here, where the approval ids are), then the same rules as any decision,
   * plus: the sender must be an address the approval was emailed to.
   */
  async decideByReply(mac: string, d: DecisionRequest & { replyFrom: string }): Promise<Answer<{ approved: boolean }>> {
    const secret = this.env.APPROVAL_SECRET;
    const objectId = this.ctx.id.toString();
    for (const a of secret ? this.approvals.list() : []) {
      if (await sameSecret(await replyMac(objectId, a.id, secret!), mac)) return this.decide(a.id, d);
    }
    return { ok: false, status: 404, error: "the reply address names no approval of this run" };
  }

  async cancel(): Promise<Answer<{ status: "cancelled" }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    if (TERMINAL.includes(run.status)) return { ok: false, status: 409, error: runEnded(run.status) };
    this.cancelled = true; // an activation in flight stops before its next step
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.approvals.voidPending(now);
      this.event("run_cancelled", {});
    });
    await clearRunState(this.states, run.id);
    this.dispatch.forget();
    await this.setAlarm(deletionDue(this.env, this.row()!.updated_at)); // retention (from when the event says it ended): replaces any activation or expiry alarm
    return { ok: true, status: "cancelled" };
  }

  /**
   * Re-arms the alarm of a run that should be running: queued or running (an
   * activation was lost), or paused with nothing left to wait for (a decision or an
   * expiry whose wake-up was lost). Refused for an ended run, or one waiting for a human.
   */
  async resume(): Promise<Answer<{ status: RunStatusName }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { status } = run;
    if (TERMINAL.includes(status)) return { ok: false, status: 409, error: `${runEnded(status)}; there is nothing to resume` };
    const next = this.approvals.earliestExpiry();
    if (status === "awaiting_approval" && next !== null && next > Date.now()) {
      // Its expiry (or follow-up) alarm is what it needs: make sure that one is armed.
      if ((await this.ctx.storage.getAlarm()) === null) await this.setAlarm(this.approvals.nextWakeUp()!);
      return { ok: false, status: 409, error: `the run waits for a human to decide; its earliest pending approval expires at ${new Date(next).toISOString()}` };
    }
    await this.wakeSoon();
    return { ok: true, status };
  }

  async status(): Promise<RunView | null> {
    const run = this.row();
    if (!run) return null;
    const journal = this.journal.load();
    return {
      id: run.id,
      worker: run.worker,
      status: run.status,
      input: parse(run.input),
      output: parse(run.output),
      error: parse(run.error),
      usage: shownUsage(journalUsage(journal), run.usage),
      approval_mode: run.approval_mode,
      trigger: parse(run.trigger),
      created_at: run.created_at,
      updated_at: run.updated_at,
      catalog_version: this.pinned.version(),
      approvals: this.approvals.list(),
      call_tree: callTree(journal, this.keyGrammar),
    };
  }

  /** A worker this run created, as `.worker` file text (`GET /runs/:id/workers/:name`). */
  async createdWorker(name: string): Promise<Answer<{ text: string }>> {
    if (!this.row()) return { ok: false, status: 404, error: "unknown run" };
    const creation = findCreation(this.journal.load(), name);
    if (!creation) return { ok: false, status: 404, error: `this run created no worker "${name}"` };
    return { ok: true, text: workerFileText(creation) };
  }

  /** Events after a cursor (`<journal seq>-<event seq>`), oldest first; `done` once the run ended and all are sent. */
  async eventsSince(cursor = "0-0", limit = 200): Promise<{ events: RunEvent[]; done: boolean } | null> {
    const run = this.row();
    if (!run) return null;
    const [j = 0, e = 0] = cursor.split("-").map((n) => Number(n) || 0);
    const steps = this.sql.all<JournalRow>`SELECT seq, key, value FROM journal WHERE seq > ${j} ORDER BY seq LIMIT ${limit}`;
    const runEvents = this.sql.all<EventRow>`SELECT seq, after_step, type, data FROM events WHERE seq > ${e} ORDER BY seq LIMIT ${limit}`;
    const events = mergeEvents(steps, runEvents, j, e, this.approvals.recordedEvents(), this.keyGrammar);
    const full = steps.length === limit || runEvents.length === limit;
    return { events, done: !full && TERMINAL.includes(run.status) };
  }

  /** Model text streamed after cursor `seq` (not persisted; see DeltaBuffer). */
  async deltasSince(seq = 0): Promise<{ deltas: ModelDelta[]; next: number }> {
    return this.deltas.since(seq);
  }

  // ——— RPC: the model-request queue's consumer (model-consumer.ts) ———

  /** MODEL_DISPATCH=queue: the consumer takes a handed-off request, once (null: nothing to do). */
  async claimModelRequest(key: string, attempt: number): Promise<ClaimedRequest | null> {
    return this.live() ? this.dispatch.claim(key, attempt) : null;
  }

  /** The consumer holding a claim is alive (it renews while the model thinks); false: stop, nobody wants the answer. */
  async renewModelClaim(key: string, attempt: number): Promise<boolean> {
    return this.live() && this.dispatch.renew(key, attempt);
  }

  /** The consumer's answer to a claimed request; recorded once, then the run wakes to record it in its journal. */
  async deliverModelAnswer(key: string, attempt: number, answer: unknown): Promise<{ recorded: boolean }> {
    // An answer of a shape the run cannot record is the model's failure (acked and dropped, it would be asked again and again).
    const parsed = deliveredAnswer.safeParse(answer);
    const delivered: DeliveredAnswer = parsed.success
      ? parsed.data
      : {
          ok: false,
          message: `its answer could not be recorded: ${parsed.error.issues.length} problem(s), first at ${parsed.error.issues[0]?.path.join(".") || "(root)"}`,
        };
    return { recorded: this.live() && (await this.dispatch.deliver(key, attempt, delivered)) };
  }

  // ——— The alarm: one activation, or retention, or a paused run's follow-ups ———

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    const run = this.row();
    if (!run) return;
    await this.index.flush();
    if (TERMINAL.includes(run.status)) return this.finishRetention();
    if (run.status === "awaiting_approval" && (await this.stillPaused(run))) return;
    await this.activate(run, info?.retryCount ?? 0);
  }

  /** An ended run's one alarm: delete it when its retention is over (retention.ts). */
  private async finishRetention(): Promise<void> {
    this.deleted = await finishedRunAlarm(this.host());
  }

  /**
   * A paused run's alarm comes at its earliest approval expiry or follow-up email, or
   * from a decision or a resume: records the expired rejections; while nothing was
   * decided or expired, sends the follow-ups due and re-arms (true). False: replay.
   */
  private async stillPaused(run: RunRow): Promise<boolean> {
    this.ctx.storage.transactionSync(() => this.approvals.expireDue(Date.now()));
    if (this.row()!.status !== "awaiting_approval" || this.approvals.earliestExpiry() === null) return false;
    await this.mail.sendFollowUps(mailRun(run));
    await this.armPause([]);
    return true;
  }

  /** Replays the journal and continues the run until it ends, pauses or is interrupted. */
  private async activate(run: RunRow, retryCount: number): Promise<void> {
    if (this.row()!.status !== "running") this.markRunning(); // an expiry recorded just now set it
    this.cancelled = false;
    this.dispatch.begin();
    // The definitions the run started on; a deploy that cannot run them fails the run (no retry would help).
    const definitions = this.pinned.definitions(run.worker);
    if (definitions instanceof RunError) {
      this.record({ status: "failed", error: { code: definitions.code, message: definitions.message }, usage: parse(run.usage) ?? emptyUsage() });
      return clearRunState(this.states, run.id);
    }
    this.activeCatalog = definitions.catalog;
    let outcome: RunOutcome;
    try {
      outcome = await this.execute(run, definitions);
    } catch (err) {
      if (err instanceof RunInterrupted) return this.onInterrupted(err);
      outcome = this.failedUnexpectedly(run, err, retryCount);
    }
    await this.settle(outcome);
  }

  /** One pass of the engine over the run's journal, with this object's ports. */
  private async execute(run: RunRow, definitions: Definitions): Promise<RunOutcome> {
    const deadline = Date.now() + this.activationBudgetMs();
    const config = engineConfig(
      this.env,
      {
        states: this.states,
        globals: rpcGlobals(() => this.env.GLOBAL_TOOLSETS.getByName("global") as never),
        beforeStep: (key, journal) => this.beforeStep(key, journal, deadline),
        recordApproval: (pending) => this.ctx.storage.transactionSync(() => this.approvals.request(pending, Date.now(), approvalTtlMs(this.env))),
        notifier: (pending) => this.mail.requestApproval(pending, mailRun(run)),
      },
      definitions,
    );
    // Queue mode hands model requests off (no streaming: the answer arrives whole); direct mode streams to watchers.
    const models = dispatchMode(this.env) === "queue" ? this.dispatch.models(config.models, definitions.models) : this.deltas.streaming(config.models);
    const outcome = await executeRun({ ...config, models }, this.journal, {
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
      this.event("run_checkpoint", {});
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
    this.record(outcome);
    if (outcome.status === "awaiting_approval") await this.armPause(outcome.pending);
    else await this.setAlarm(deletionDue(this.env, this.row()!.updated_at)); // retention: the ended run's one alarm
  }

  /**
   * One alarm per pause: at the earliest pending expiry (so an approval nobody
   * decides resolves as a rejection then) or follow-up email; at once if a decision
   * landed meanwhile (the run is then marked running: the alarm must replay).
   */
  private async armPause(pending: PendingApproval[]): Promise<void> {
    if (this.approvals.anyResolved(pending.map((p) => p.id))) {
      this.markRunning();
      return this.wakeSoon();
    }
    const at = this.approvals.nextWakeUp();
    if (at !== null) await this.setAlarm(at);
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure (one row: the event counts retries). */
  private async retryLater(detail: string): Promise<void> {
    const retries = (this.row()?.retries ?? 0) + 1;
    this.event("run_retry", { detail, attempt: retries });
    const delay = Math.min(30_000 * 2 ** (retries - 1), 3_600_000);
    await this.setAlarm(Date.now() + delay);
  }

  /**
   * Saves the outcome in one row, the event that ends or pauses the run (run_current
   * reads it from there); an ended run voids its pending approvals in the same transaction.
   */
  private record(outcome: RunOutcome): void {
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      if (outcome.status !== "awaiting_approval") this.approvals.voidPending(now);
      const result = outcome.status === "succeeded" ? { output: outcome.output } : outcome.status === "failed" ? { error: outcome.error } : {};
      this.event(`run_${outcome.status}`, { ...result, usage: outcome.usage });
    });
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

  /** Before each step of an activation (after the cancel check). */
  protected async stepStarting(_key: string, _journal: Journal): Promise<void> {}

  /** After the engine returned an outcome, before it is recorded. */
  protected async outcomeReached(): Promise<void> {}

  /** Arms the alarm to run the next activation now. */
  protected async wakeSoon(): Promise<void> {
    await this.setAlarm(Date.now());
  }

  /** Every alarm goes through here (brought forward to a pending index retry). */
  protected async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(this.index.clamp(at));
  }

  // ——— The run's rows and events, and the collaborators' host ———

  /**
   * A running run that waits for a handed-off answer has an alarm, at the latest when
   * the hand-off lapses: checked as the object starts, so a restart that lost the alarm
   * (local dev keeps none) cannot leave a dead consumer's claim unnoticed.
   */
  private async armDispatchLapse(): Promise<void> {
    if (this.row()?.status !== "running" || (await this.ctx.storage.getAlarm()) !== null) return;
    const at = this.dispatch.earliestLapse();
    if (at !== null) await this.setAlarm(at);
  }

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

  /** One row: the event is the status (see RUN_CURRENT in schema.ts). */
  private markRunning(): void {
    this.event("run_running", {});
  }

  private event(type: string, data: Record<string, unknown>): void {
    this.sql.run`INSERT INTO events (after_step, type, data, at) VALUES ((SELECT coalesce(max(seq), 0) FROM journal), ${type}, ${json(data)}, ${Date.now()})`;
    this.noted(type, data);
  }

  /** What an event does besides its row (a log line, an index report); alone for facts another row already records. */
  private noted(type: string, data: Record<string, unknown>): void {
    logRunEvent(this.sql, type, data);
    this.index.noted(type);
  }

  /** What the collaborators may use of this object (host.ts): never an RPC method. */
  private host(): RunHost {
    return {
      ctx: this.ctx,
      env: this.env,
      sql: this.sql,
      event: (type, data) => this.event(type, data),
      noted: (type, data) => this.noted(type, data),
      wakeSoon: () => this.wakeSoon(),
      setAlarm: (at) => this.setAlarm(at),
      activeCatalog: () => this.activeCatalog,
    };
  }
}
