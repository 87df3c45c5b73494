/**
 * RunDO, the Durable Object of one run. Owns the run's SQLite (schema.ts: `run`,
 * `journal`, `state`; `events` through record.ts, `approvals` and `approval_mail` through approvals.ts)
 * and its alarm, whose every write and every status change go through the lifecycle
 * (lifecycle.ts). Its collaborators in this folder (made in parts.ts) reach it through
 * RunHost (host.ts); its RPC methods and its alarm delegate to them: what the app asks
 * (controls.ts, view.ts, conversation.ts, fork.ts), the run index's stuck-run sweep (sweep.ts),
 * the model-request queue (model-dispatch.ts), one activation of the engine (activation.ts) and a pause (pause.ts).
 */

import { DurableObject } from "cloudflare:workers";
import type { Journal } from "../../src/engine/journal/journal";
import type { KeyGrammar } from "../../src/engine/journal/keys";
import { numberVar } from "../../src/config";
import type { ForkCopy, ForkRows, ForkRun, ForkSource, JournalStepView } from "../../src/runs/fork";
import type { OtelVars } from "../../src/otel/exporter";
import type { SweepAnswer } from "../../src/runs/index-types";
import type { RunRpc } from "../../src/runs/rpc";
import {
  PAUSED,
  TERMINAL,
  type Answer,
  type Decided,
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
import { armDispatchLapse, recordableAnswer, type ClaimedRequest } from "../model-dispatch";
import type { RunRow } from "../rows";
import { keyGrammarOf, migrateRun, RUN_CURRENT } from "../schema";
import { Sql } from "../sql";
import { continueByEmail } from "./email-reply";
import type { RunHost } from "./host";
import type { IoPoint } from "./io";
import type { ChildEnd } from "../../src/engine/types/children";
import type { ChildEndAnswer } from "./children";
import { runParts, type RunParts } from "./parts";
import { finishedRunAlarm } from "./retention";
import { indexShardOf } from "../../src/runs/index-shards";

/** How long one activation may run before it checkpoints (ACTIVATION_BUDGET_MS). */
const ACTIVATION_BUDGET_MS = 5 * 60_000;
/** A report the run index refused is sent again this much later. */
const INDEX_RETRY_MS = 30_000;

/**
 * One run: its SQLite journal, approvals, events and run-scoped toolset state.
 * The run executes in `alarm()`, never in a request: each activation replays the
 * journal and continues; a pause ends the activation with one alarm, at the
 * earliest deadline of what it waits for.
 *
 * Reading order: the RPC methods (one-line delegations), then the alarm, the seams
 * a subclass overrides, then the collaborators' host.
 */
export class RunDO extends DurableObject<Env> implements RunRpc {
  protected readonly sql: Sql;
  private readonly parts: RunParts;
  /** How the run's journal keys are written (schema.ts keyGrammarOf), read when first needed. */
  private grammar?: KeyGrammar;
  /** Retention deleted the run: this instance answers as for an unknown run. */
  private deleted = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateRun(this.sql);
    const host = this.host();
    this.parts = runParts(host, {
      indexRetryMs: this.indexRetryMs(),
      indexHome: (runId) => this.indexHome(runId),
      budgetMs: () => this.activationBudgetMs(),
      otelVars: () => this.otelVars(),
      stepStarting: (key, j) => this.stepStarting(key, j),
      outcomeReached: () => this.outcomeReached(),
      storeAlarm: (at) => this.setAlarm(at),
    });
    const { lifecycle, dispatch } = this.parts;
    void ctx.blockConcurrencyWhile(() => armDispatchLapse(host, () => lifecycle.armedAt(), dispatch));
  }

  // ——— RPC: what the app asks (src/runs/rpc.ts): controls.ts, view.ts, and the run index's sweep ———

  async start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    return this.parts.controls.start(req);
  }

  async decide(approvalId: string, d: DecisionRequest): Promise<Answer<Decided>> {
    return this.parts.controls.decide(approvalId, d);
  }

  async decideByReply(mac: string, reply: ReplyRequest): Promise<Answer<Decided>> {
    return this.parts.controls.decideByReply(mac, reply);
  }

  async cancel(reason?: string, onlyFrom?: readonly RunStatusName[]): Promise<Answer<{ status: "cancelled" | "cancelling" }>> {
    return this.parts.controls.cancel(reason, onlyFrom);
  }

  async resume(): Promise<Answer<{ status: RunStatusName }>> {
    return this.parts.controls.resume();
  }

  async deliverEvent(ev: EventDelivery, buffer: boolean): Promise<Answer<EventOutcome>> {
    return this.parts.controls.deliverEvent(ev, buffer);
  }

  /** A child run's end, told by the child's outbox until answered (children.ts): recorded once. */
  async childEnded(key: string, child: string, end: ChildEnd): Promise<ChildEndAnswer> {
    if (typeof key !== "string" || typeof child !== "string" || typeof end !== "object" || end === null)
      return { ok: false, error: "a child's end is a key, a run id and an end" };
    return this.parts.children.ended(key, child, end);
  }

  /** `POST /runs/:id/messages`: the next message of a finished run's conversation (conversation.ts); `id`: the same id again adds none. */
  async sendMessage(text: string, id?: string): Promise<Answer<SentMessage>> {
    return this.parts.conversation.send(text, { id });
  }

  /** A flow key's delivery for the run (`on_busy: message`): waits its turn while the run works; 410 once it ended (the key starts a new run). */
  async followUp(text: string, id: string): Promise<Answer<SentMessage>> {
    return this.parts.conversation.send(text, { id }, { live: true });
  }

  /** A reply to one of the run's answer mails: `mac` from the reference its Reply-To carries (email-reply.ts). */
  async continueByEmail(mac: string, reply: EmailReply): Promise<Answer<SentMessage>> {
    return continueByEmail(this.host(), this.parts.conversation, mac, reply);
  }

  async status(): Promise<RunView | null> {
    return this.parts.reader.status();
  }

  /** `GET /runs/:id/workers/:name` */
  async createdWorker(name: string): Promise<Answer<{ text: string }>> {
    return this.parts.reader.createdWorker(name);
  }

  async eventsSince(cursor = "0-0", limit = 200): Promise<{ events: RunEvent[]; done: boolean } | null> {
    return this.parts.reader.eventsSince(cursor, limit);
  }

  /** Model text streamed after cursor `seq` (not persisted; see DeltaBuffer). */
  async deltasSince(seq = 0): Promise<{ deltas: ModelDelta[]; next: number }> {
    return this.parts.deltas.since(seq);
  }

  /** `GET /runs/:id/journal` */
  async journalSteps(after: number, limit: number): Promise<{ steps: JournalStepView[]; next: number | null } | null> {
    return this.parts.reader.journalSteps(after, limit);
  }

  /** The run index's stuck-run sweep asks (sweep.ts); `indexed`: the summary version the index holds. */
  async sweep(indexed: number): Promise<SweepAnswer> {
    return this.parts.sweep.sweep(Number.isSafeInteger(indexed) ? indexed : 0);
  }

  // ——— RPC: forking (fork.ts): `fork` asked of the new run, the others of its source ———

  async fork(req: ForkRun): Promise<Answer<{ status: RunStatusName; created: boolean; copied: ForkCopy }>> {
    return this.parts.forks.fork(req);
  }

  async forkSource(at: string): Promise<Answer<{ source: ForkSource }>> {
    return this.parts.forks.source(at);
  }

  async forkRows(atSeq: number, after: number): Promise<Answer<ForkRows>> {
    return this.parts.forks.rows(atSeq, after);
  }

  // ——— RPC: the model-request queue's consumer (model-consumer.ts; model-dispatch.ts) ———

  /** MODEL_DISPATCH=queue: the consumer takes a handed-off request, once (null: nothing to do). */
  async claimModelRequest(key: string, attempt: number): Promise<ClaimedRequest | null> {
    const claimed = this.live() ? await this.parts.dispatch.claim(key, attempt) : null;
    // Read again after the claim's await: a run cancelled meanwhile asks nobody for the model's answer.
    if (!claimed || !this.live()) return null;
    this.parts.deltas.claimed(key, attempt);
    return claimed;
  }

  /**
   * The claim holder's model text so far (delta-forwarder.ts): kept in memory for the
   * run page, nothing written. `watched`: whether a page read pieces lately.
   */
  async forwardModelText(key: string, attempt: number, n: number, text: string): Promise<{ watched: boolean }> {
    if (typeof text !== "string" || !this.live()) return { watched: false };
    this.parts.deltas.forwarded(key, attempt, n, text);
    return { watched: this.parts.deltas.watched() };
  }

  /** The consumer holding a claim is alive (it renews while the model thinks); false: stop, nobody wants the answer. */
  async renewModelClaim(key: string, attempt: number): Promise<boolean> {
    return this.live() && this.parts.dispatch.renew(key, attempt);
  }

  /** The consumer's answer to a claimed request; recorded once, then the run wakes to record it in its journal. */
  async deliverModelAnswer(key: string, attempt: number, answer: unknown): Promise<{ recorded: boolean }> {
    const recorded = this.live() && (await this.parts.dispatch.deliver(key, attempt, recordableAnswer(answer)));
    this.parts.deltas.delivered(key);
    return { recorded };
  }

  // ——— The alarm: one activation (activation.ts), or retention, or a paused run's follow-ups (pause.ts) ———

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    const { lifecycle } = this.parts;
    // Another alarm of this object is running (the runtime never does this; a test's helper can): ask again, for after it.
    if (!lifecycle.alarmStarting()) return this.wakeSoon();
    let threw = true;
    try {
      await this.activate(info?.retryCount ?? 0);
      threw = false;
    } finally {
      lifecycle.alarmEnded(threw);
    }
  }

  /** The alarm's awaits come first; then it reads the run, and decides on what it read (lifecycle.ts, invariant 6). */
  private async activate(retryCount: number): Promise<void> {
    const { index, answers, outbox, slack, pause, activation } = this.parts;
    await this.io("alarm.index-flush", () => index.flush());
    await this.io("alarm.answer-mail", () => answers.sendDue());
    await this.io("alarm.outbox", async () => {
      await outbox.sendDue();
      await slack.showDecisions(); // a decision, by any way, shown on its Slack message
    });
    const run = this.row();
    if (!run) return;
    // An ended run's one alarm: delete it when its retention is over (retention.ts).
    if (TERMINAL.includes(run.status)) this.deleted = await finishedRunAlarm(this.host(), this.parts.lifecycle);
    else if (!PAUSED.includes(run.status) || !(await pause.stillPaused(run))) await activation.run(run, retryCount);
  }

  // ——— Seams a subclass may override (the test pool's TestRunDO does: tests/support/test-objects.ts) ———

  /** How long one activation may run before it checkpoints. */
  protected activationBudgetMs(): number {
    return numberVar(this.env, "ACTIVATION_BUDGET_MS", ACTIVATION_BUDGET_MS);
  }

  /** How long a failed report to the run index waits before it is sent again. */
  protected indexRetryMs(): number {
    return INDEX_RETRY_MS;
  }

  /** The run index object a new run reports to: its shard. */
  protected indexHome(runId: string): string {
    return indexShardOf(runId);
  }

  /** The OpenTelemetry variables (tracing.ts): the Worker's vars and secrets. */
  protected otelVars(): OtelVars {
    return this.env as OtelVars;
  }

  /** Before each step of an activation (before its cancel check). */
  protected async stepStarting(_key: string, _journal: Journal): Promise<void> {}

  /** After the engine returned an outcome, before it is recorded. */
  protected async outcomeReached(): Promise<void> {}

  /** The time waits are measured by (timers, timeouts, the engine's clock). */
  protected now(): number {
    return Date.now();
  }

  /** When "now" is for a wake-up a request asks for. */
  protected soon(): number {
    return Date.now();
  }

  /** Writes the alarm, at the time the lifecycle chose (lifecycle.ts: every alarm goes through it). */
  protected async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
  }

  /** Every await where other requests may land (io.ts); in production, nothing but the await. */
  protected io<T>(_point: IoPoint, fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  // ——— The run's row, and the collaborators' host ———

  private get keyGrammar(): KeyGrammar {
    return (this.grammar ??= keyGrammarOf(this.sql));
  }

  /** A wake-up requested now (lifecycle.ts `wake`). */
  private wakeSoon(): Promise<void> {
    return this.parts.lifecycle.wake(this.soon());
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
      event: (type, data) => this.parts.record.event(type, data),
      noted: (type, data) => this.parts.record.noted(type, data),
      wakeSoon: () => this.wakeSoon(),
      wake: (at) => this.parts.lifecycle.wake(at),
      arm: (at) => this.parts.lifecycle.arm(at),
      io: (point, fn) => this.io(point, fn),
      now: () => this.now(),
      soon: () => this.soon(),
      activeCatalog: () => this.parts.activation.catalog,
      row: () => this.row(),
      keyGrammar: () => this.keyGrammar,
    };
  }
}
