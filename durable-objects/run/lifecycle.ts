/**
 * A run's lifecycle: every change of its status, and its one alarm. Owns no table: a
 * status is the run's newest lifecycle event (RUN_CURRENT in schema.ts), written here;
 * the alarm is the object's. Needs from its host: `ctx` (transactions, the alarm), the
 * SQL and `event`; and where the alarm is written (RunDO's `setAlarm` seam) and what
 * pulls it forward (a failed index report, an answer mail due).
 *
 *   (none) ─start─▶ queued ─activate─▶ running ─settle─▶ awaiting_approval | waiting
 *                                      ▲   │                     │
 *                                      │   │   a decision, an event, an expiry or a wait's end is a
 *                                      │   │   journal step: RUN_CURRENT reads the run as running
 *                                      │   │   again; `activate` writes it when the pause was recorded after
 *                                      │   ├─settle─▶ succeeded ─▶ running, in the same transaction, when a
 *                                      │   │          message waits its turn (follow-ups.ts): it is taken next
 *                                      │   └─settle─▶ succeeded | failed
 *                                      └────converse─── succeeded (a conversation's next message)
 *   cancel: queued | running | awaiting_approval | waiting ─▶ cancelled
 *   cancel of a run with effects to undo (`compensate:`): ─cancelUndoing─▶ running (its body runs
 *     no more; it undoes them, pausing for an undo's approval) ─settle─▶ cancelled; a second cancel changes nothing
 *   the stuck-run sweep (sweep.ts), of a queued or running run with no alarm and none running:
 *     revive ─▶ the same status, woken (`run_swept`) · abandon ─▶ failed (`stuck`)
 *
 * What goes with a transition, in its transaction (`TransitionHooks`): a success takes the
 * message waiting its turn; an end drops the messages waiting (failed, cancelled) and, with a
 * pause, plans the run's notifications (outbox.ts: the flow key object that started it, its
 * completion webhooks), which the alarm then sends — so an end is never notified unless
 * recorded, and never recorded without its notification.
 *
 * Invariants, each with the tests that guard it (in tests/durable-objects/lifecycle.test.ts
 * unless named otherwise; the interleaving harness, interleavings*.test.ts, checks 1, 3, 6
 * and 7 at every io point of the object, io.ts):
 * 1. A transition reads the status it starts from in the transaction that writes it; one
 *    it may not start from is refused, writes nothing, and is a value its caller handles.
 *    Nothing writes `running` or an outcome over an ended run. ("a cancel landing in the
 *    alarm's await … sticks: the run never runs", "an outcome the engine reached after a
 *    cancel answered is not recorded", "no step starts after a cancel answered")
 * 2. A run whose row says it ended (an object from before schema version 4: RUN_CURRENT
 *    keeps that status whatever its events say) takes no transition. ("a run that finished
 *    under schema version 3 refuses a message with 409, and records nothing")
 * 3. A wake-up once requested is never moved later: `wake` brings the alarm forward, and
 *    every other alarm (`arm`: a pause's deadline, a hand-off's lapse, a retry, retention)
 *    is at most the earliest wake-up requested since the alarm last started. ("a deadline
 *    never moves a wake-up later…", "an event landing while the pause registers its waits
 *    with the wait index keeps its wake-up", "a message landing while the ending activation
 *    mails its answer is answered", lifecycle.queue.test.ts "a decision landing during a
 *    queue-mode activation wakes the run at once…")
 * 4. An alarm consumes the wake-ups requested before it starts (it reads the run after them).
 *    One that throws forgets what it knew of the alarm (the runtime retries it; a test's
 *    runDurableObjectAlarm deleted it): the next `wake` or `arm` reads storage. ("… an alarm
 *    that starts consumes the wake-ups before it", "an alarm that throws forgets the alarm it knew…")
 * 5. Alarms of one object never overlap: the runtime runs one at a time, and a second (a
 *    test's helper can) only asks for a wake-up after it. ("a second alarm while one runs is
 *    not started", "a second alarm while one runs only asks for a wake-up after it…")
 * 6. Nothing decides on a row read before an await: the alarm awaits first and then reads
 *    the run; each later await is followed by a transition or a read that checks again.
 *    ("a message landing in an ended run's alarm (…) is answered…", "a message to a run
 *    past its retention is refused…", and the harness's cancel at a consumer's claim)
 * 7. A queued or running run has an alarm, unless one is running. (the harness, after every interleaving)
 *    The platform breaks it (an alarm it ended past a limit, retried, then dropped): `stuck` says
 *    so, and the sweep mends it, or fails the run. (stuck-runs.test.ts "a run killed on every
 *    activation…", "a run whose alarm the platform dropped…"; the harness lands `sweep` at every io point: never stuck there)
 * 8. A run never ends succeeded with a message waiting: the success's transaction takes it
 *    (conversation.test.ts "a message while the run works waits its turn…"; the harness's
 *    working conversation: "n messages accepted, n taken, n of them answered").
 * 9. An end is written with its notifications, one outbox row per listener, in one
 *    transaction; the alarm sends them until each is delivered or given up, and the alarm
 *    comes no later than the next one due (the harness: "its end … is not notified";
 *    tests/notify/completion.test.ts).
 * 10. A cancel of a run with effects to undo (`cancelUndoing`) lets exactly one kind of activation
 *    end it: one begun after the cancel, which runs no body and only undoes (`settle`'s `undoing`);
 *    an activation begun before records no outcome or pause. Nothing of the body starts after the
 *    cancel answered. (compensation-cancel.test.ts: at each step seam, with an order in flight,
 *    evicted between undos, paused for an approval)
 */

import { isPaused, waitingFor, type RunOutcome, type Usage, type WaitingFor } from "../../src/engine";
import { PAUSED, TERMINAL, type RunStatusName } from "../../src/runs/types";
import type { RunRow } from "../rows";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";

/** Why a run cancelled while it undoes its effects takes no event or message: its body runs no more. */
export const CANCELLING_REFUSAL = "the run was cancelled and is undoing its effects: it takes nothing more";

/** The event of a cancel that lets the run undo its effects first (`cancelUndoing`), and the KV row that keeps it. */
const CANCELLING = "run_cancelling";
const CANCEL_REQUEST = "cancel-request";
type CancelRequest = { reason?: string };

/** An alarm handler runs at most this long (the platform's wall-time limit): a mark older than that was cut off. */
const ALARM_WALL_MS = 15 * 60_000;

const LIVE: readonly RunStatusName[] = ["queued", "running", ...PAUSED];

/** A transition that was made: the status it started from; `continued`: a success took a message waiting its turn, the run is running. */
export type Moved = { ok: true; from: RunStatusName; continued?: boolean };
/** A transition refused: the status the run has (undefined: no run), and whether its row says it ended (before schema version 4). */
export type Refused = { ok: false; from: RunStatusName | undefined; legacy: boolean };

/** Where the alarm is written, and what pulls it forward. */
export interface AlarmPort {
  store(at: number): Promise<void>;
  clamp(at: number): number;
}

/** What goes with a transition, in its transaction. */
export interface TransitionHooks {
  /** A success: the message waiting its turn, recorded as the conversation's next (its number); undefined when none waits. */
  takeWaitingMessage(): number | undefined;
  /** The run ended (`failed`, `cancelled`: the messages waiting are dropped) or paused: its notifications are planned. */
  outcome(status: RunStatusName): void;
  /** The run was cancelled and undoes its effects before it ends: its children are cancelled now. */
  cancelling(): void;
}

export class RunLifecycle {
  /** What storage holds; undefined: not known yet (read it). */
  private armed: number | null | undefined;
  /** The earliest wake-up requested since the alarm last started; undefined: not known (the armed alarm counts as one). */
  private requested: number | null | undefined;
  /** When the alarm in progress started. */
  private alarmSince: number | undefined;

  constructor(
    private readonly host: Pick<RunHost, "ctx" | "sql" | "event" | "row">,
    private readonly approvals: Pick<RunApprovals, "voidPending">,
    private readonly port: AlarmPort,
    private readonly hooks: TransitionHooks,
  ) {}

  // ——— The status ———

  /** The run's status; undefined for no run (none started here, or retention deleted it: this instance's tables are gone). */
  status(): RunStatusName | undefined {
    return this.host.row()?.status;
  }

  /** Whether the run's own row says it ended: an object from before schema version 4, whose events cannot change its status. */
  endedInRow(): boolean {
    const row = this.host.sql.one<Pick<RunRow, "status">>`SELECT status FROM run`;
    return row !== undefined && TERMINAL.includes(row.status);
  }

  /** The run's first row (`insert`) and `run_queued`, where no run is; false: a run is there. */
  start(worker: string, insert: () => void): boolean {
    return this.host.ctx.storage.transactionSync(() => {
      if (this.status() !== undefined) return false;
      insert();
      this.host.event("run_queued", { worker });
      return true;
    });
  }

  /** An activation begins: queued, or paused with what it waited for ended (an expiry or a decision recorded before its pause), becomes running. */
  activate(): Moved | Refused {
    return this.move(LIVE, (from) => from !== "running" && this.host.event("run_running", {}));
  }

  /**
   * What an activation came to, from running only: a pause, or an end (which voids the pending
   * approvals). `alongside` writes what goes with it in the same transaction (an answer mail planned).
   */
  settle(outcome: RunOutcome, undoing: boolean, alongside?: () => void): Moved | Refused {
    let continued = false;
    // An activation that began before a cancel asked the run to undo its effects records nothing: the undoing one ends it.
    const moved = this.move(
      ["running"],
      () => {
        alongside?.();
        if (!isPaused(outcome)) this.approvals.voidPending(Date.now());
        this.host.event(`run_${outcome.status}`, { ...outcomeData(outcome), usage: outcome.usage });
        // A message that came while the run worked is answered next: the answer above stays its own turn.
        const message = outcome.status === "succeeded" ? this.hooks.takeWaitingMessage() : undefined;
        if (message !== undefined) {
          this.host.event("run_running", { message });
          continued = true;
        } else this.hooks.outcome(outcome.status);
      },
      () => (this.cancelRequested() !== undefined) === undoing,
    );
    return moved.ok && continued ? { ...moved, continued } : moved;
  }

  /**
   * A cancel, of a run that has not ended: its pending approvals are voided with it; `reason`: why,
   * on its event; `onlyFrom`: the statuses it may start from (a bulk operation's filter, checked here).
   */
  cancel(reason?: string, onlyFrom?: readonly RunStatusName[]): Moved | Refused {
    const from = onlyFrom ? LIVE.filter((s) => onlyFrom.includes(s)) : LIVE;
    return this.move(from, () => {
      this.approvals.voidPending(Date.now());
      this.host.event("run_cancelled", reason ? { reason } : {});
      this.hooks.outcome("cancelled");
    });
  }

  /**
   * A cancel of a run with effects its tools can undo: the run stays live (running) for an
   * activation that undoes them and ends it cancelled (`settle`, `undoing`); its pending approvals
   * are voided, its children cancelled. Refused, like `cancel`, for a run that ended.
   */
  cancelUndoing(reason?: string, onlyFrom?: readonly RunStatusName[]): Moved | Refused {
    const from = onlyFrom ? LIVE.filter((s) => onlyFrom.includes(s)) : LIVE;
    return this.move(from, (status) => {
      this.approvals.voidPending(Date.now());
      this.host.event(CANCELLING, reason ? { reason } : {});
      this.host.ctx.storage.kv.put<CancelRequest>(CANCEL_REQUEST, reason ? { reason } : {});
      if (status !== "running") this.host.event("run_running", {});
      this.hooks.cancelling();
    });
  }

  /** The cancel a run undoing its effects was asked (`cancelUndoing`): its reason; undefined when none was. */
  cancelRequested(): CancelRequest | undefined {
    // One KV row (read at every activation and settle), not a walk of the events for the one that says so.
    return this.host.ctx.storage.kv.get<CancelRequest>(CANCEL_REQUEST);
  }

  /** The sweep found the run stuck (`stuck`): `write` records its attempt, in the transaction that checks it is still queued or running. */
  revive(write: () => void): Moved | Refused {
    return this.move(["queued", "running"], write);
  }

  /**
   * The sweep gave up on a stuck run: it fails with `error` (its pending approvals voided with it);
   * one cancelled while it undid its effects ends cancelled, `error` its note (some may stay made).
   */
  abandon(error: { code: "stuck"; message: string }, usage: Usage): Moved | Refused {
    return this.move(["queued", "running"], () => {
      this.approvals.voidPending(Date.now());
      const cancel = this.cancelRequested();
      if (cancel) this.host.event("run_cancelled", { ...cancel, note: `its effects may not all be undone: ${error.message}`, usage });
      else this.host.event("run_failed", { error, usage });
      this.hooks.outcome(cancel ? "cancelled" : "failed");
    });
  }

  /** The next message of a conversation, to a run that succeeded: `write` records it, and the run is running again. */
  converse(message: number, write: () => void): Moved | Refused {
    return this.move(["succeeded"], () => {
      write();
      this.host.event("run_running", { message });
    });
  }

  private move(from: readonly RunStatusName[], write: (from: RunStatusName) => unknown, allowed = () => true): Moved | Refused {
    return this.host.ctx.storage.transactionSync(() => {
      const status = this.status();
      if (status === undefined || !from.includes(status) || !allowed()) return { ok: false, from: status, legacy: false };
      if (TERMINAL.includes(status) && this.endedInRow()) return { ok: false, from: status, legacy: true };
      write(status);
      return { ok: true, from: status };
    });
  }

  // ——— The alarm ———

  /** A wake-up requested for `at` (a decision, an event, a message, an answer delivered…): the alarm comes no later. */
  async wake(at: number): Promise<void> {
    const armed = await this.known();
    const before = this.requested === undefined ? armed : this.requested;
    this.requested = Math.min(before ?? Infinity, at);
    await this.write(Math.min(armed ?? Infinity, at));
  }

  /** The run's next deadline (a pause's, a hand-off's lapse, a retry, retention): the alarm is set to it, but never later than a wake-up requested. */
  async arm(at: number): Promise<void> {
    const armed = await this.known();
    const requested = this.requested === undefined ? armed : this.requested;
    await this.write(Math.min(requested ?? Infinity, at));
  }

  /** What the alarm is set to (null: none), read from storage: what this instance remembers may be lost (resume's case). */
  async armedAt(): Promise<number | null> {
    this.armed = await this.host.ctx.storage.getAlarm();
    return this.armed;
  }

  /**
   * Whether the run is stuck: queued or running, with no alarm in storage and none running
   * in this object (or one running past the platform's wall limit, which it cannot be): the
   * platform ended an activation without an outcome, retried it, then dropped it (invariant 7).
   * While the platform retries, the alarm stays in storage.
   */
  async stuck(): Promise<boolean> {
    const armed = await this.armedAt();
    const status = this.status();
    return (status === "queued" || status === "running") && armed === null && !this.alarmRunning(Date.now());
  }

  /** The run is deleted: no alarm. */
  async clear(): Promise<void> {
    await this.host.ctx.storage.deleteAlarm();
    this.armed = this.requested = null;
  }

  /** An alarm starts: it consumes the alarm and the wake-ups requested. False: another alarm of this object is running. */
  alarmStarting(): boolean {
    const now = Date.now();
    this.armed = null; // an alarm that runs was taken off
    if (this.alarmRunning(now)) return false;
    this.alarmSince = now;
    this.requested = null;
    return true;
  }

  /** The alarm ended; one that threw leaves the alarm unknown (the runtime retries it, or a test deleted it). */
  alarmEnded(threw: boolean): void {
    this.alarmSince = undefined;
    if (threw) this.armed = this.requested = undefined;
  }

  /** An alarm of this object is running (one started longer ago than the platform allows was cut off). */
  private alarmRunning(now: number): boolean {
    return this.alarmSince !== undefined && now - this.alarmSince < ALARM_WALL_MS;
  }

  /** What this instance knows the alarm is set to: storage is read once, or again after an alarm threw. */
  private async known(): Promise<number | null> {
    return this.armed === undefined ? this.armedAt() : this.armed;
  }

  private async write(at: number): Promise<void> {
    const t = this.port.clamp(at);
    if (t === Infinity || t === this.armed) return;
    this.armed = undefined; // until the write is known to have happened
    await this.port.store(t);
    this.armed = t;
  }
}

/** An outcome's event data besides its usage. */
function outcomeData(outcome: RunOutcome): Record<string, unknown> {
  if (outcome.status === "succeeded") return { output: outcome.output };
  if (outcome.status === "failed") return { error: outcome.error };
  if (outcome.status === "cancelled") return { ...(outcome.reason ? { reason: outcome.reason } : {}), ...(outcome.note ? { note: outcome.note } : {}) };
  return pauseData(outcome);
}

/** A pause's event data: its timers, events and questions (`waiting_for`; a question by its id), when it has any. */
function pauseData(paused: Parameters<typeof waitingFor>[0]): { waiting_for?: WaitingFor[] } {
  const waiting = waitingFor(paused);
  return waiting.length ? { waiting_for: waiting } : {};
}
