/**
 * What the app asks a run to do: start it, decide one of its approvals (by the app or
 * an emailed reply), cancel it, resume it. Owns the `run` table's first row (the
 * start); the rest are events and journal steps. Every status it changes goes through
 * the lifecycle (lifecycle.ts), which checks the status it starts from. Needs from its
 * host: `ctx` (transactions, the object's id), `env` (APPROVAL_SECRET, retention), the
 * SQL, `row`, `noted`, `now`, `wakeSoon` and `arm`.
 */

import { clearRunState } from "../../src/engine";
import { sortedAttributes } from "../../src/engine/attributes";
import { deployedVersion } from "../../src/catalog";
import { isoInstant } from "../../src/engine/iso-time";
import { snapshotFor, type CatalogSnapshot } from "../../src/pinned-catalog";
import {
  PAUSED,
  TERMINAL,
  type Answer,
  type Decided,
  type DecisionRequest,
  type ReplyRequest,
  type EventDelivery,
  type EventOutcome,
  type RunStatusName,
  type StartRun,
} from "../../src/runs/types";
import { sameSecret } from "../../src/security/constant-time";
import { replyMac } from "../../src/tokens/reply-reference";
import type { ModelDispatch } from "../model-dispatch";
import { initiatorOf } from "../../src/runs/initiator";
import type { RunRow } from "../rows";
import { json, parse } from "../sql";
import type { SqliteStateBackend } from "../sqlite-state";
import { runEnded, type RunApprovals } from "./approvals";
import { catalogColumns } from "./catalog";
import type { RunHost } from "./host";
import { CANCELLING_REFUSAL, type RunLifecycle } from "./lifecycle";
import { keepListeners } from "./outbox";
import { deletionDue, tombstoneOf } from "./retention";
import type { RunWaits } from "./waits";
import type { RunSlack } from "./slack";

/** Characters of a cancel's reason kept on its event. */
const MAX_CANCEL_REASON = 500;

type ControlsHost = Pick<RunHost, "ctx" | "env" | "sql" | "row" | "noted" | "wakeSoon" | "arm" | "now">;

/** The parts of the run the controls act on, and how a cancel stops an activation in flight. */
export interface ControlledParts {
  lifecycle: Pick<RunLifecycle, "start" | "cancel" | "cancelUndoing" | "cancelRequested" | "status" | "armedAt">;
  approvals: RunApprovals;
  waits: RunWaits;
  states: SqliteStateBackend;
  dispatch: ModelDispatch;
  /** Where each approval's Slack message is (a press must come from it). */
  slack: Pick<RunSlack, "message">;
  /** An activation in flight stops before its next step. */
  stopActivation(): void;
  /**
   * What a cancel finds to undo (`compensate:`): `effects`, recorded or maybe about to be (a cancel lets the run undo
   * them first); `failing`, the run failed and is undoing them already; `none`.
   */
  undosOnCancel(): "none" | "effects" | "failing";
  /** The run was cancelled (its trace's root span, tracing.ts). */
  cancelled(run: RunRow): void;
}

/** The app's controls of one run (RunDO's `start`, `decide`, `decideByReply`, `cancel`, `resume`, `deliverEvent`). */
export class RunControls {
  constructor(
    private readonly host: ControlsHost,
    private readonly parts: ControlledParts,
  ) {}

  /**
   * Stores the run and arms the alarm. Idempotent: a second start returns the first.
   * `pinned`: the definitions to pin instead of the current ones (a fork of a pinned run; null: none).
   */
  async start(req: StartRun, pinned?: CatalogSnapshot | null): Promise<{ id: string; status: RunStatusName; created: boolean }> {
    const { ctx, sql } = this.host;
    const snapshot = pinned === undefined ? await snapshotFor(req.worker) : pinned; // before the check: no await between it and the insert
    const deleted = tombstoneOf(ctx);
    if (deleted) return { id: req.id, status: deleted.status, created: false };
    const now = Date.now();
    const catalog = catalogColumns(snapshot);
    const started = this.parts.lifecycle.start(req.worker, () => {
      keepListeners(ctx, req.notify);
      sql.run`INSERT INTO run (id, worker, input, status, approval_mode, budget, trigger, created_at, updated_at, catalog_version, catalog_files, edgework_version, attributes)
        VALUES (${req.id}, ${req.worker}, ${json(req.input)}, 'queued', ${req.approvalMode}, ${json(req.budget)}, ${json(req.trigger)}, ${now}, ${now}, ${catalog.version}, ${catalog.files}, ${deployedVersion()}, ${startAttributes(req.attributes)})`;
    });
    if (!started) {
      const existing = this.host.row()!;
      return { id: existing.id, status: existing.status, created: false };
    }
    await this.host.wakeSoon();
    return { id: req.id, status: "queued", created: true };
  }

  /** Records a decision in the journal and wakes the run; replay carries it past the approval. */
  async decide(approvalId: string, d: DecisionRequest): Promise<Answer<Decided>> {
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const initiator = initiatorOf(parse(run.trigger));
    // A Slack press decides only from the message posted for this approval: a button value copied elsewhere decides nothing.
    if (d.slackMessage) {
      const posted = this.parts.slack.message(approvalId);
      if (posted?.channel !== d.slackMessage.channel || posted.ts !== d.slackMessage.ts)
        return { ok: false, status: 403, error: "this button is not on the message posted for this approval" };
    }
    // The status read in the transaction that records the decision: an ended run's approvals are void.
    const { answer, recorded } = this.host.ctx.storage.transactionSync(() =>
      this.parts.approvals.decide(approvalId, d, { status: this.parts.lifecycle.status()!, initiator }, Date.now()),
    );
    if (recorded) await this.host.wakeSoon();
    return answer;
  }

  /**
   * A decision by emailed reply: the reference's MAC names one approval of this run
   * (checked here, where the approval ids are), then the same rules as any decision,
   * plus: the sender must be an address the approval was emailed to.
   */
  async decideByReply(mac: string, reply: ReplyRequest): Promise<Answer<Decided>> {
    if (!this.host.row()) return { ok: false, status: 404, error: "unknown run" };
    const secret = this.host.env.APPROVAL_SECRET;
    const objectId = this.host.ctx.id.toString();
    for (const a of secret ? this.parts.approvals.list() : []) {
      if (!(await sameSecret(await replyMac(objectId, a.id, secret!), mac))) continue;
      const { by, decider, replyFrom } = reply;
      // A question is answered by the reply's first paragraph; an approval by its decision line.
      if (a.kind === "question") {
        if (!reply.answer) return { ok: false, status: 400, error: "the reply has no answer: write it above the quoted question" };
        return this.decide(a.id, { decision: "approve", answer: reply.answer, by, decider, replyFrom });
      }
      if (!reply.decision) return { ok: false, status: 400, error: reply.noDecision };
      return this.decide(a.id, { ...reply.decision, by, decider, replyFrom });
    }
    return { ok: false, status: 404, error: "the reply address names no approval of this run" };
  }

  /**
   * An event for the run, recorded in one transaction (its id once): a wait it ends
   * wakes the run, which replays past the wait with the event as its result.
   */
  async deliverEvent(ev: EventDelivery, buffer: boolean): Promise<Answer<EventOutcome>> {
    const status = this.parts.lifecycle.status();
    if (!status) return { ok: false, status: 404, error: "unknown run" };
    if (!TERMINAL.includes(status) && this.parts.lifecycle.cancelRequested()) return { ok: false, status: 409, error: CANCELLING_REFUSAL };
    const answer = this.host.ctx.storage.transactionSync(() => this.parts.waits.deliver(ev, status, buffer, this.host.now()));
    this.host.noted("event_received", { name: ev.name, applied: answer.ok && answer.applied, duplicate: answer.ok && answer.duplicate });
    // A wait recorded by an activation in flight is taken too: its pause (pause.ts `arm`) sees it ended.
    if (answer.ok && answer.applied && PAUSED.includes(status)) await this.host.wakeSoon();
    return answer;
  }

  /**
   * `reason`: why (a flow key's replace), kept on the run_cancelled event; bounded, it is the app's text.
   * A run with effects its tools undo is `cancelling`: it undoes them, then ends cancelled (a second cancel changes nothing).
   */
  async cancel(reason?: string, onlyFrom?: readonly RunStatusName[]): Promise<Answer<{ status: "cancelled" | "cancelling" }>> {
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { lifecycle } = this.parts;
    const live = !TERMINAL.includes(run.status);
    // Cancelled already, undoing: nothing changes (one outside a bulk cancel's filter is refused below, by the lifecycle).
    if (live && lifecycle.cancelRequested() && (!onlyFrom || onlyFrom.includes(run.status))) return { ok: true, status: "cancelling" };
    const undos = this.parts.undosOnCancel();
    // Its end is decided: it fails once its undos are made (a cancel would void the approvals they wait for).
    if (live && undos === "failing") return { ok: false, status: 409, error: "the run failed and is undoing its effects: it ends failed once they are made" };
    const why = typeof reason === "string" ? reason.slice(0, MAX_CANCEL_REASON) : undefined;
    const undoing = undos === "effects";
    const moved = undoing ? lifecycle.cancelUndoing(why, onlyFrom) : lifecycle.cancel(why, onlyFrom);
    if (!moved.ok) {
      const live = moved.from !== undefined && !TERMINAL.includes(moved.from);
      return { ok: false, status: 409, error: live ? `the run is ${moved.from}, no longer one of ${onlyFrom?.join(", ")}` : runEnded(moved.from!) };
    }
    this.parts.stopActivation();
    this.parts.dispatch.forget();
    // The next activation undoes the effects and ends the run (activation.ts); the run's state stays until then.
    if (undoing) {
      await this.host.wakeSoon();
      return { ok: true, status: "cancelling" };
    }
    this.parts.cancelled(run);
    await clearRunState(this.parts.states, run.id);
    // Retention, from when the event says it ended: replaces a pause's deadline, never a wake-up requested.
    await this.host.arm(deletionDue(this.host.env, this.host.row()!.updated_at));
    return { ok: true, status: "cancelled" };
  }

  /**
   * Re-arms the alarm of a run that should be running: queued or running (an
   * activation was lost), or paused with nothing left to wait for (a decision, an
   * expiry or a wait's end whose wake-up was lost). Refused for an ended run, or a paused
   * one whose approvals, questions and waits all end ahead (its alarm is made sure of:
   * the earliest of them).
   */
  async resume(): Promise<Answer<{ status: RunStatusName }>> {
    // The operator's tool for a lost alarm: what storage holds, not what this instance remembers.
    const armed = await this.parts.lifecycle.armedAt();
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { status } = run;
    if (TERMINAL.includes(status)) return { ok: false, status: 409, error: `${runEnded(status)}; there is nothing to resume` };
    const { approvals, waits } = this.parts;
    // Approvals expire on the wall clock, waits on the run's (a seam tests move).
    const expiry = approvals.earliestExpiry();
    const deadline = waits.nextDeadline();
    const due = (expiry !== null && expiry <= Date.now()) || (deadline !== null && deadline <= this.host.now());
    if (PAUSED.includes(status) && !due && (expiry !== null || deadline !== null)) {
      if (armed === null) await this.host.arm(Math.min(...[approvals.nextWakeUp(), deadline].filter((t): t is number => t !== null)));
      return { ok: false, status: 409, error: `the run ${stillWaiting(status, expiry, deadline)}` };
    }
    await this.host.wakeSoon();
    return { ok: true, status };
  }
}

/** A start's attributes as the run row keeps them: JSON in name order, null for none. */
const startAttributes = (a: StartRun["attributes"]) => (a && Object.keys(a).length ? json(sortedAttributes(a)) : null);

/** Why a paused run with everything ahead is not resumed, naming what ends first of what it waits for. */
function stillWaiting(status: RunStatusName, expiry: number | null, deadline: number | null): string {
  const at = (ms: number) => isoInstant(ms) ?? `${ms} ms after 1970, past any date`;
  if (status === "awaiting_approval" && expiry !== null) return `waits for a human to decide; its earliest pending approval expires at ${at(expiry)}`;
  if (expiry !== null && (deadline === null || expiry <= deadline)) return `waits for a person to answer; its earliest question expires at ${at(expiry)}`;
  return `waits for a timer or an event; its earliest wait ends at ${at(deadline!)}`;
}
