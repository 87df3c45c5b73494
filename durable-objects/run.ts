import { DurableObject } from "cloudflare:workers";
import { clearRunState, executeRun, messageOf, RunError, RunInterrupted, StorageError, type Catalog, type PendingApproval, type RunOutcome } from "../src/engine";
import { findCreation, workerFileText } from "../src/engine/run/created-workers";
import { callTree } from "../src/engine/journal/call-tree";
import { journalUsage } from "../src/engine/journal/run-usage";
import { shownUsage } from "./run-usage";
import type { KeyGrammar } from "../src/engine/journal/keys";
import type { Journal } from "../src/engine/journal/journal";
import { emptyUsage } from "../src/engine/run/usage";
import { sameSecret } from "../src/security/constant-time";
import { replyMac } from "../src/tokens/reply-reference";
import { dispatchMode, engineConfig, numberVar } from "./engine-config";
import { rpcGlobals } from "./global-toolsets-bridge";
import { mergeEvents } from "./run-events";
import { approvalTtlMs, RunApprovals, runEnded, type DecisionRequest } from "./run-approvals";
import { RunIndexSync } from "./run-index-sync";
import { LoggedJournalStore, logRunEvent } from "./run-log";
import { deletionDue, finishedRunAlarm, tombstoneOf } from "./run-retention";
import { catalogColumns, RunCatalog } from "./run-catalog";
import { snapshotFor } from "../src/pinned-catalog";
import { DeltaBuffer, type ModelDelta } from "./run-deltas";
import { FaultInjector, type TestHooks } from "./run-faults";
import { RunMail } from "./run-mail";
import { TERMINAL, type Answer, type RunEvent, type RunStatusName, type RunView, type StartRun } from "./run-types";
import { keyGrammarOf, migrateRun, RUN_CURRENT } from "./schema";
import { deliveredAnswer, ModelDispatch, type ClaimedRequest, type DeliveredAnswer } from "./model-dispatch";
import { json, parse, Sql } from "./sql";
import type { SqliteJournalStore } from "./sqlite-journal";
import { SqliteStateBackend } from "./sqlite-state";

/** An alarm that keeps throwing is retried by the runtime; after this many the run fails. */
const MAX_ALARM_RETRIES = 5;

/**
 * One run: its SQLite journal, approvals, events and run-scoped toolset state.
 * The run executes in `alarm()`, never in a request: each activation replays the
 * journal and continues; a pause for approval ends the activation with one alarm,
 * at the earliest expiry of what it waits for.
 */
export class RunDO extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly states: SqliteStateBackend;
  private readonly journal: SqliteJournalStore;
  private readonly approvals: RunApprovals;
  private readonly index: RunIndexSync;
  private readonly pinned: RunCatalog;
  /** The catalog of the activation in progress (the run's pinned one). */
  private activeCatalog: Catalog | undefined;
  private alarmsSet = 0;
  private cancelled = false;
  private readonly faults: FaultInjector;
  private readonly mail: RunMail;
  private deleted = false;
  /** Model text as it streams, for watchers of the run page (memory only). */
  private readonly deltas = new DeltaBuffer();
  /** MODEL_DISPATCH=queue: model requests handed to the queue, answers delivered back. */
  private readonly dispatch: ModelDispatch;
  /** How the run's journal keys are written (schema.ts keyGrammarOf), read when first needed. */
  private grammar?: KeyGrammar;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateRun(this.sql);
    this.states = new SqliteStateBackend(this.sql);
    this.journal = new LoggedJournalStore(this.sql);
    this.index = new RunIndexSync(ctx, env, this.sql);
    this.approvals = new RunApprovals(this.sql, this.journal, (type, data) => this.event(type, data), (type, data) => this.noted(type, data));
    this.pinned = new RunCatalog(this.sql);
    this.faults = new FaultInjector(ctx);
    this.mail = new RunMail(ctx, env, this.approvals, (type, data) => this.event(type, data), () => this.activeCatalog);
    this.dispatch = new ModelDispatch(this.sql, env, ctx.id.toString(), () => this.wakeSoon());
    void ctx.blockConcurrencyWhile(() => this.armDispatchLapse());
  }

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

  /** Stores the run and arms the alarm. Idempotent: a second start returns the first. */
  async start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    const snapshot = await snapshotFor(req.worker); // before the check: no await between it and the insert
    const deleted = tombstoneOf(this.ctx);
    if (deleted) return { id: req.id, status: deleted.status, created: false };
    const existing = this.row();
    if (existing) return { id: existing.id as string, status: existing.status as RunStatusName, created: false };
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

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    const run = this.row();
    if (run) await this.index.flush();
    // Retention: a deleted run's tables are gone; this instance answers as for an unknown run.
    if (run && TERMINAL.includes(run.status as RunStatusName)) return void (this.deleted = await finishedRunAlarm(this.ctx, this.env, this.sql, (at) => this.setAlarm(at)));
    // A paused run's alarm comes at its earliest approval expiry, or from a decision or a
    // resume: record the expired rejections, then replay (also when an activation
    // recorded the pause after a decision arrived).
    if (!run || !["queued", "running", "awaiting_approval"].includes(run.status as string)) return;
    if (run.status === "awaiting_approval") this.ctx.storage.transactionSync(() => this.approvals.expireDue(Date.now()));
    // Still paused (nothing decided or expired): this alarm is for reminders and escalations.
    if (this.row()!.status === "awaiting_approval" && this.approvals.earliestExpiry() !== null) {
      await this.mail.sendFollowUps({ id: run.id as string, trigger: parse(run.trigger) });
      return this.armPause([]);
    }
    if (this.row()!.status !== "running") this.markRunning(); // an expiry recorded just now set it
    this.cancelled = false;
    this.faults.reset();
    this.dispatch.begin();
    // The definitions the run started on; a deploy that cannot run them fails the run (no retry would help).
    const definitions = this.pinned.definitions(run.worker as string);
    if (definitions instanceof RunError) {
      this.record({ status: "failed", error: { code: definitions.code, message: definitions.message }, usage: parse(run.usage) ?? emptyUsage() });
      return clearRunState(this.states, run.id as string);
    }
    this.activeCatalog = definitions.catalog;
    const deadline = Date.now() + (this.faults.activationBudgetMs ?? numberVar(this.env, "ACTIVATION_BUDGET_MS", 5 * 60_000));
    let outcome: RunOutcome;
    try {
      const config = engineConfig(this.env, {
        states: this.states,
        globals: rpcGlobals(() => this.env.GLOBAL_TOOLSETS.getByName("global") as never),
        beforeStep: (key, journal) => this.beforeStep(key, journal, deadline),
        recordApproval: (pending) => this.ctx.storage.transactionSync(() => this.approvals.request(pending, Date.now(), approvalTtlMs(this.env))),
        notifier: (pending) => this.mail.requestApproval(pending, { id: run.id as string, trigger: parse(run.trigger) }),
      }, definitions);
      // Queue mode hands model requests off (no streaming: the answer arrives whole); direct mode streams to watchers.
      const models = dispatchMode(this.env) === "queue" ? this.dispatch.models(config.models, definitions.models) : this.deltas.streaming(config.models);
      outcome = await executeRun({ ...config, models }, this.journal, {
        runId: run.id as string,
        worker: run.worker as string,
        input: parse(run.input),
        approvalMode: run.approval_mode as StartRun["approvalMode"],
        budget: parse(run.budget),
        keyGrammar: this.keyGrammar,
      });
      // A fault between the last step and saving the outcome (e.g. right after an approval email).
      if (this.faults.armed) await this.faults.check(this.sql.one`SELECT count(*) AS n FROM journal`!.n as number);
    } catch (err) {
      if (err instanceof RunInterrupted) {
        if (err.reason === "checkpoint") {
          this.event("run_checkpoint", {});
          await this.wakeSoon();
        }
        if (err.reason === "retry") await this.retryLater(err.detail ?? "");
        if (err.reason === "fault") throw err;
        const at = err.reason === "dispatched" && this.row()?.status === "running" ? this.dispatch.rearmAt() : null;
        if (at !== null) await this.setAlarm(at); // a lost hand-off or answer is sent again then
        return;
      }
      // Unexpected (storage, bug, bad config): let the runtime retry the alarm, then give up visibly.
      // A failure every retry would repeat (a permanent StorageError) fails the run now.
      const permanent = err instanceof StorageError && err.permanent;
      if (!permanent && (info?.retryCount ?? 0) < MAX_ALARM_RETRIES) throw err;
      outcome = { status: "failed", error: { code: err instanceof StorageError ? "storage" : "internal", message: messageOf(err) }, usage: parse(run.usage) ?? emptyUsage() };
    }
    if (this.row()?.status !== "running") return; // cancelled while this activation ran
    this.record(outcome);
    if (outcome.status === "awaiting_approval") await this.armPause(outcome.pending);
    else await this.setAlarm(deletionDue(this.env, this.row()!.updated_at as number)); // retention: the ended run's one alarm
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

  /** Checkpoint before the next step once the activation's wall-time budget is spent (after some progress). */
  private async beforeStep(key: string, journal: Journal, deadline: number): Promise<void> {
    if (this.cancelled) throw new RunInterrupted("cancelled");
    await this.faults.check(journal.size, () => journal.othersSettled(key));
    if (journal.executed > 0 && Date.now() > deadline) throw new RunInterrupted("checkpoint");
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure (one row: the event counts retries). */
  private async retryLater(detail: string): Promise<void> {
    const retries = ((this.row()?.retries as number) ?? 0) + 1;
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

  /** Records a decision in the journal and wakes the run; replay carries it past the approval. */
  async decide(approvalId: string, d: DecisionRequest): Promise<Answer<{ approved: boolean }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { answer, recorded } = this.ctx.storage.transactionSync(() => this.approvals.decide(approvalId, d, run.status as RunStatusName, Date.now()));
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
    if (TERMINAL.includes(run.status as RunStatusName)) return { ok: false, status: 409, error: runEnded(run.status as RunStatusName) };
    this.cancelled = true; // an activation in flight stops before its next step
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.approvals.voidPending(now);
      this.event("run_cancelled", {});
    });
    await clearRunState(this.states, run.id as string);
    this.dispatch.forget();
    await this.setAlarm(deletionDue(this.env, this.row()!.updated_at as number)); // retention (from when the event says it ended): replaces any activation or expiry alarm
    return { ok: true, status: "cancelled" };
  }

  async status(): Promise<RunView | null> {
    const run = this.row();
    if (!run) return null;
    const journal = this.journal.load();
    return {
      id: run.id as string,
      worker: run.worker as string,
      status: run.status as RunStatusName,
      input: parse(run.input),
      output: parse(run.output),
      error: parse(run.error),
      usage: shownUsage(journalUsage(journal), run.usage),
      approval_mode: run.approval_mode as RunView["approval_mode"],
      trigger: parse(run.trigger),
      created_at: run.created_at as number,
      updated_at: run.updated_at as number,
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
    const [j, e] = cursor.split("-").map((n) => Number(n) || 0) as [number, number];
    const steps = this.sql.all`SELECT seq, key, value FROM journal WHERE seq > ${j} ORDER BY seq LIMIT ${limit}`;
    const runEvents = this.sql.all`SELECT seq, after_step, type, data FROM events WHERE seq > ${e} ORDER BY seq LIMIT ${limit}`;
    const events = mergeEvents(steps, runEvents, j, e, this.approvals.recordedEvents(), this.keyGrammar);
    const full = steps.length === limit || runEvents.length === limit;
    return { events, done: !full && TERMINAL.includes(run.status as RunStatusName) };
  }

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
    const delivered: DeliveredAnswer = parsed.success ? parsed.data : { ok: false, message: `its answer could not be recorded: ${parsed.error.issues.length} problem(s), first at ${parsed.error.issues[0]?.path.join(".") || "(root)"}` };
    return { recorded: this.live() && (await this.dispatch.deliver(key, attempt, delivered)) };
  }

  /** Model text streamed after cursor `seq` (not persisted; see DeltaBuffer). */
  async deltasSince(seq = 0): Promise<{ deltas: ModelDelta[]; next: number }> {
    return this.deltas.since(seq);
  }

  /**
   * Re-arms the alarm of a run that should be running: queued or running (an
   * activation was lost), or paused with nothing left to wait for (a decision or an
   * expiry whose wake-up was lost). Refused for an ended run, or one waiting for a human.
   */
  async resume(): Promise<Answer<{ status: RunStatusName }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const status = run.status as RunStatusName;
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

  /** `resume`, as a yes/no (test helpers). */
  async wake(): Promise<boolean> {
    return (await this.resume()).ok;
  }

  /**
   * Arms the alarm to run the next activation now. In the test pool it is set a
   * minute ahead instead: tests drive activations with runDurableObjectAlarm, which
   * the real scheduler would race.
   */
  private async wakeSoon(): Promise<void> {
    await this.setAlarm(Date.now() + (this.env.EDGEWORK_TEST_HOOKS === "1" ? 60_000 : 0));
  }

  /** Every alarm goes through here: each one set is a storage write, counted for cost reports. */
  private async setAlarm(at: number): Promise<void> {
    this.alarmsSet++;
    await this.ctx.storage.setAlarm(this.index.clamp(at));
  }

  /** Rows read and written, and alarms set, by this object since it was constructed (cost accounting). */
  async storageStats(): Promise<{ rowsRead: number; rowsWritten: number; alarmsSet: number }> {
    return { rowsRead: this.sql.rowsRead, rowsWritten: this.sql.rowsWritten, alarmsSet: this.alarmsSet };
  }

  async setTestHooks(hooks: TestHooks): Promise<void> {
    if (this.env.EDGEWORK_TEST_HOOKS !== "1") throw new Error("test hooks are only available in the test pool");
    this.faults.arm(hooks);
  }

  private live(): boolean {
    const status = this.row()?.status as RunStatusName | undefined;
    return status !== undefined && !TERMINAL.includes(status);
  }

  private row() {
    return this.deleted ? undefined : this.sql.one`SELECT * FROM ${RUN_CURRENT} AS run_current`;
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
}
