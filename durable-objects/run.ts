import { DurableObject } from "cloudflare:workers";
import { sendApprovalEmail, type EmailOutcome } from "../src/email/approval-notifier";
import { clearRunState, executeRun, messageOf, RunInterrupted, StorageError, type ApprovalDecision, type PendingApproval, type RunOutcome } from "../src/engine";
import { callTree } from "../src/engine/journal/call-tree";
import { stepEvents } from "../src/engine/journal/events";
import type { Journal } from "../src/engine/journal/journal";
import { emptyUsage } from "../src/engine/usage";
import { engineConfig, numberVar } from "./engine-config";
import { rpcGlobals } from "./global-toolsets-bridge";
import { TERMINAL, type Answer, type ApprovalView, type RunEvent, type RunStatusName, type RunView, type StartRun } from "./run-types";
import { migrateRun } from "./schema";
import { json, parse, Sql } from "./sql";
import { SqliteJournalStore } from "./sqlite-journal";
import { SqliteStateBackend } from "./sqlite-state";

const DAY = 86_400;

let warned = false;
/** Once per isolate: a missing email setup is a configuration fact, not news on every approval. */
function warnOnce(message: string): void {
  if (warned) return;
  warned = true;
  console.warn(`edgework: ${message}`);
}
/** An alarm that keeps throwing is retried by the runtime; after this many the run fails. */
const MAX_ALARM_RETRIES = 5;

/** Test-pool hooks: fault injection, and a smaller activation budget to force checkpoints. */
export interface TestHooks {
  /** Interrupt before the first step that starts once the journal has this many steps. */
  fault?: { atJournalSize: number; mode: "throw" | "abort" };
  activationBudgetMs?: number;
}

/**
 * One run: its SQLite journal, approvals, events and run-scoped toolset state.
 * The run executes in `alarm()`, never in a request: each activation replays the
 * journal and continues; a pause for approval ends the activation with no alarm.
 */
export class RunDO extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly states: SqliteStateBackend;
  private readonly journal: SqliteJournalStore;
  private cancelled = false;
  private fault: TestHooks["fault"];
  private activationBudgetMs: number | undefined;
  private faulted = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateRun(this.sql);
    this.states = new SqliteStateBackend(this.sql);
    this.journal = new SqliteJournalStore(this.sql);
  }

  /** Stores the run and arms the alarm. Idempotent: a second start returns the first. */
  async start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    const existing = this.row();
    if (existing) return { id: existing.id as string, status: existing.status as RunStatusName, created: false };
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.sql.run`INSERT INTO run (id, worker, input, status, approval_mode, budget, trigger, created_at, updated_at)
        VALUES (${req.id}, ${req.worker}, ${json(req.input)}, 'queued', ${req.approvalMode}, ${json(req.budget)}, ${json(req.trigger)}, ${now}, ${now})`;
      this.event("run_queued", { worker: req.worker });
    });
    await this.wakeSoon();
    return { id: req.id, status: "queued", created: true };
  }

  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    const run = this.row();
    // A paused run has an alarm only when something armed it (a decision, wake): replay
    // then, also if an activation recorded the pause after that decision arrived.
    if (!run || !["queued", "running", "awaiting_approval"].includes(run.status as string)) return;
    if (run.status !== "running") this.setStatus("running");
    this.cancelled = false;
    this.faulted = false;
    const deadline = Date.now() + (this.activationBudgetMs ?? numberVar(this.env, "ACTIVATION_BUDGET_MS", 5 * 60_000));
    let outcome: RunOutcome;
    try {
      const config = engineConfig(this.env, {
        states: this.states,
        globals: rpcGlobals(() => this.env.GLOBAL_TOOLSETS.getByName("global") as never),
        beforeStep: (_key, journal) => this.beforeStep(journal, deadline),
        notifier: (pending) => this.requestApproval(pending, { id: run.id as string, trigger: parse(run.trigger) }),
      });
      outcome = await executeRun(config, this.journal, {
        runId: run.id as string,
        worker: run.worker as string,
        input: parse(run.input),
        approvalMode: run.approval_mode as StartRun["approvalMode"],
        budget: parse(run.budget),
      });
      // A fault between the last step and saving the outcome (e.g. right after an approval email).
      if (this.fault) await this.injectFault(this.sql.one`SELECT count(*) AS n FROM journal`!.n as number);
    } catch (err) {
      if (err instanceof RunInterrupted) {
        if (err.reason === "checkpoint") {
          this.event("run_checkpoint", {});
          await this.wakeSoon();
        }
        if (err.reason === "retry") await this.retryLater(err.detail ?? "");
        if (err.reason === "fault") throw err;
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
  }

  /** Checkpoint before the next step once the activation's wall-time budget is spent (after some progress). */
  private async beforeStep(journal: Journal, deadline: number): Promise<void> {
    if (this.cancelled) throw new RunInterrupted("cancelled");
    await this.injectFault(journal.size);
    if (journal.executed > 0 && Date.now() > deadline) throw new RunInterrupted("checkpoint");
  }

  /** Test pool only: interrupts the activation once the journal holds `atJournalSize` steps. */
  private async injectFault(journalSize: number): Promise<void> {
    if (this.faulted) throw new RunInterrupted("fault");
    if (!this.fault || journalSize < this.fault.atJournalSize) return;
    const { mode } = this.fault;
    this.fault = undefined;
    // Every step that would start after this point is stopped, concurrent ones too.
    this.faulted = true;
    if (mode === "abort") {
      // "Evicted after step k": step k is durable first. (A crash before its write
      // commits repeats that one step; the output gate keeps any later effect from
      // leaving before the write is confirmed.)
      await this.ctx.storage.sync();
      this.ctx.abort("fault injected by test");
    }
    throw new RunInterrupted("fault");
  }

  /**
   * The engine's approval notifier (a journal step: once per approval). Records the
   * approval, then emails the approver. A failed send interrupts the activation so
   * the alarm retries it later; the approval is decidable by API meanwhile.
   */
  private async requestApproval(p: PendingApproval, run: { id: string; trigger: unknown }): Promise<EmailOutcome & { expires_at: number }> {
    const now = Date.now();
    const ttl = numberVar(this.env, "APPROVAL_TTL_SECONDS", 7 * DAY) * 1000;
    const inserted = this.sql.all`INSERT INTO approvals (id, key, call_path, worker_chain, tool, args, description, notify, status, created_at, expires_at)
      VALUES (${p.id}, ${p.key}, ${p.callPath}, ${json(p.workerChain)}, ${p.tool}, ${json(p.args)}, ${p.description}, ${p.notify ?? null}, 'pending', ${now}, ${now + ttl})
      ON CONFLICT (id) DO NOTHING RETURNING id`;
    if (inserted.length) this.event("approval_requested", { approval_id: p.id, tool: p.tool, worker_chain: p.workerChain, description: p.description });
    const expiresAt = this.sql.one`SELECT expires_at FROM approvals WHERE id = ${p.id}`!.expires_at as number;
    let outcome: EmailOutcome;
    try {
      outcome = await sendApprovalEmail(this.env, p, run, expiresAt);
    } catch (err) {
      throw new RunInterrupted("retry", `sending the approval email for ${p.tool} failed: ${messageOf(err)}`);
    }
    if (outcome.emailed) this.event("approval_emailed", { approval_id: p.id, to: outcome.to });
    else warnOnce(`approval emails are off (missing ${outcome.missing.join(", ")}); approvals stay reachable by API and on the run page`);
    return { ...outcome, expires_at: expiresAt };
  }

  /** Re-arms the alarm with backoff (30 s doubling, at most an hour) after a transient failure. */
  private async retryLater(detail: string): Promise<void> {
    const retries = ((this.row()?.retries as number) ?? 0) + 1;
    this.sql.run`UPDATE run SET retries = ${retries}, updated_at = ${Date.now()}`;
    this.event("run_retry", { detail, attempt: retries });
    const delay = Math.min(30_000 * 2 ** (retries - 1), 3_600_000);
    await this.ctx.storage.setAlarm(Date.now() + delay);
  }

  private record(outcome: RunOutcome): void {
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      const output = outcome.status === "succeeded" ? json(outcome.output) : null;
      const error = outcome.status === "failed" ? json(outcome.error) : null;
      this.sql.run`UPDATE run SET status = ${outcome.status}, output = ${output}, error = ${error}, usage = ${json(outcome.usage)}, retries = 0, updated_at = ${now}`;
      this.event(`run_${outcome.status}`, outcome.status === "failed" ? { error: outcome.error } : {});
    });
  }

  /** Records a decision in the journal and wakes the run; replay carries it past the approval. */
  async decide(approvalId: string, d: { decision: "approve" | "reject"; note?: string; by: string; remember?: boolean }): Promise<Answer<{ approved: boolean }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    if (run.status === "cancelled") return { ok: false, status: 409, error: "the run was cancelled; its approvals are void" };
    const ap = this.sql.one`SELECT key, status, expires_at, tool, args, worker_chain FROM approvals WHERE id = ${approvalId}`;
    if (!ap) return { ok: false, status: 404, error: `unknown approval "${approvalId}" for this run` };
    if (ap.status !== "pending") return { ok: false, status: 409, error: `approval already ${ap.status}` };
    const now = Date.now();
    const expired = now > (ap.expires_at as number);
    const decision: ApprovalDecision = expired
      ? { approved: false, by: "expiry", note: "the approval expired before anyone decided" }
      : {
          approved: d.decision === "approve",
          by: d.by,
          ...(d.note ? { note: d.note } : {}),
          ...(d.remember && d.decision === "approve" ? { remember: { worker: parse<string[]>(ap.worker_chain).at(-1)!, tool: ap.tool as string, args: parse(ap.args) } } : {}),
        };
    const status = expired ? "expired" : decision.approved ? "approved" : "rejected";
    this.ctx.storage.transactionSync(() => {
      this.journal.put(ap.key as string, decision);
      this.sql.run`UPDATE approvals SET status = ${status}, note = ${decision.note ?? null}, decided_by = ${decision.by}, decided_at = ${now} WHERE id = ${approvalId}`;
      this.sql.run`UPDATE run SET status = 'running', updated_at = ${now}`;
      this.event("approval_recorded", { approval_id: approvalId, status, by: decision.by });
    });
    await this.wakeSoon();
    if (expired) return { ok: false, status: 410, error: "the approval expired; it counts as a rejection" };
    return { ok: true, approved: decision.approved };
  }

  async cancel(): Promise<Answer<{ status: "cancelled" }>> {
    const run = this.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    if (TERMINAL.includes(run.status as RunStatusName)) return { ok: false, status: 409, error: `the run already ${run.status === "cancelled" ? "was cancelled" : run.status}` };
    this.cancelled = true; // an activation in flight stops before its next step
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.sql.run`UPDATE run SET status = 'cancelled', updated_at = ${now}`;
      this.sql.run`UPDATE approvals SET status = 'voided', decided_at = ${now} WHERE status = 'pending'`;
      this.event("run_cancelled", {});
    });
    await clearRunState(this.states, run.id as string);
    await this.ctx.storage.deleteAlarm();
    return { ok: true, status: "cancelled" };
  }

  async status(): Promise<RunView | null> {
    const run = this.row();
    if (!run) return null;
    return {
      id: run.id as string,
      worker: run.worker as string,
      status: run.status as RunStatusName,
      input: parse(run.input),
      output: parse(run.output),
      error: parse(run.error),
      usage: parse(run.usage),
      approval_mode: run.approval_mode as RunView["approval_mode"],
      trigger: parse(run.trigger),
      created_at: run.created_at as number,
      updated_at: run.updated_at as number,
      approvals: this.approvals(),
      call_tree: callTree(this.journal.load()),
    };
  }

  /** Events after a cursor (`<journal seq>-<event seq>`), oldest first; `done` once the run ended and all are sent. */
  async eventsSince(cursor = "0-0", limit = 200): Promise<{ events: RunEvent[]; done: boolean } | null> {
    const run = this.row();
    if (!run) return null;
    let [j, e] = cursor.split("-").map((n) => Number(n) || 0) as [number, number];
    const steps = this.sql.all`SELECT seq, key, value FROM journal WHERE seq > ${j} ORDER BY seq LIMIT ${limit}`;
    const runEvents = this.sql.all`SELECT seq, after_step, type, data FROM events WHERE seq > ${e} ORDER BY seq LIMIT ${limit}`;
    // Journal step s sorts at (s, 0); an event written after step s at (s, 1, its seq).
    const merged = [
      ...steps.map((r) => ({ order: [r.seq as number, 0, 0], j: r.seq as number, e: undefined, items: stepEvents(r.key as string, parse(r.value)) })),
      ...runEvents.map((r) => ({ order: [r.after_step as number, 1, r.seq as number], j: undefined, e: r.seq as number, items: [{ type: r.type as string, data: parse<Record<string, unknown>>(r.data) }] })),
    ].sort((a, b) => a.order[0]! - b.order[0]! || a.order[1]! - b.order[1]! || a.order[2]! - b.order[2]!);
    const events: RunEvent[] = [];
    for (const m of merged) {
      if (m.j !== undefined) j = m.j;
      if (m.e !== undefined) e = m.e;
      for (const item of m.items) events.push({ id: `${j}-${e}`, ...item });
    }
    const full = steps.length === limit || runEvents.length === limit;
    return { events, done: !full && TERMINAL.includes(run.status as RunStatusName) };
  }

  /** Re-arms the alarm of a run that should be running (after a lost activation). */
  async wake(): Promise<boolean> {
    const status = this.row()?.status;
    if (status !== "queued" && status !== "running") return false;
    await this.wakeSoon();
    return true;
  }

  /**
   * Arms the alarm to run the next activation now. In the test pool it is set a
   * minute ahead instead: tests drive activations with runDurableObjectAlarm, which
   * the real scheduler would race.
   */
  private async wakeSoon(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + (this.env.EDGEWORK_TEST_HOOKS === "1" ? 60_000 : 0));
  }

  /** Rows read and written by this object since it was constructed (cost accounting). */
  async storageStats(): Promise<{ rowsRead: number; rowsWritten: number }> {
    return { rowsRead: this.sql.rowsRead, rowsWritten: this.sql.rowsWritten };
  }

  async setTestHooks(hooks: TestHooks): Promise<void> {
    if (this.env.EDGEWORK_TEST_HOOKS !== "1") throw new Error("test hooks are only available in the test pool");
    this.fault = hooks.fault;
    this.activationBudgetMs = hooks.activationBudgetMs;
  }

  private row() {
    return this.sql.one`SELECT * FROM run`;
  }

  private approvals(): ApprovalView[] {
    return this.sql.all`SELECT * FROM approvals ORDER BY created_at, id`.map((r) => ({
      id: r.id as string,
      status: r.status as ApprovalView["status"],
      tool: r.tool as string,
      args: parse(r.args),
      description: r.description as string,
      worker_chain: parse(r.worker_chain),
      call_path: r.call_path as string,
      notify: (r.notify as string | null) ?? null,
      note: (r.note as string | null) ?? null,
      decided_by: (r.decided_by as string | null) ?? null,
      created_at: r.created_at as number,
      decided_at: (r.decided_at as number | null) ?? null,
      expires_at: r.expires_at as number,
    }));
  }

  private setStatus(status: RunStatusName): void {
    this.ctx.storage.transactionSync(() => {
      this.sql.run`UPDATE run SET status = ${status}, updated_at = ${Date.now()}`;
      this.event(`run_${status}`, {});
    });
  }

  private event(type: string, data: Record<string, unknown>): void {
    this.sql.run`INSERT INTO events (after_step, type, data, at) VALUES ((SELECT coalesce(max(seq), 0) FROM journal), ${type}, ${json(data)}, ${Date.now()})`;
  }
}
