/**
 * A run's approvals. Owns the `approvals` and `approval_mail` tables (schema.ts), and
 * through MailFailures the emails that were not delivered (`mail_failures`);
 * reads decisions from the journal (APPROVALS_CURRENT). Needs from its host: the
 * SQL, `event` (approval_requested) and `noted` (approval_recorded: its row is the
 * journal step). The caller runs each method inside its transaction.
 */

import { recordedAddress, refusalOf, type ApprovalDecision, type Decider, type DeciderPolicy, type PendingApproval } from "../../src/engine";
import { approvedArgs, bindsArguments } from "../../src/engine/journal/fingerprint";
import type { FollowUp } from "../../src/engine/types/worker";
import { numberVar } from "../../src/config";
import { TERMINAL, type Answer, type ApprovalView, type Decided, type DecisionRequest, type RunStatusName } from "../../src/runs/types";
import type { ApprovalMailRow, ApprovalRow, AtRow, MailKind } from "../rows";
import { APPROVALS_CURRENT } from "../schema";
import { json, parse } from "../sql";
import type { SqliteJournalStore } from "../sqlite-journal";
import { changeOf, changeView, requestMismatch } from "./call-changes";
import type { RunHost } from "./host";
import { logRunEvent } from "./log";
import { MailFailures } from "./mail-failures";

/** How long a pending approval waits for a decision before it counts as rejected (APPROVAL_TTL_SECONDS, default a week). */
export const approvalTtlMs = (env: Env) => numberVar(env, "APPROVAL_TTL_SECONDS", 7 * 86_400) * 1000;

/** An email that is due (a follow-up, or a request tried again), with the approval it is about. */
export interface DueMail {
  kind: MailKind;
  recipient: string;
  /** Whom the approval was first emailed to (for the escalation's note; null for a request). */
  originallyTo: string | null;
  approval: ApprovalView;
}

/**
 * What an expired approval records, whoever notices first: the run's alarm, or a late
 * decider. `expired` tells it from a rejection (APPROVALS_CURRENT in schema.ts); the gate reads the rest.
 */
export const EXPIRED: ApprovalDecision & { expired: true } = {
  approved: false,
  by: "expiry",
  note: "the approval expired before anyone decided",
  expired: true,
};
const EXPIRED_ANSWER = { ok: false, status: 410, error: "the approval expired; it counts as a rejection" } as const;

/** Why nothing about an ended run can be decided (or resumed) any more. */
export const runEnded = (status: RunStatusName) => `the run ${status === "cancelled" ? "was cancelled" : `already ${status}`}`;

const lower = (address: string) => address.trim().toLowerCase();

/** The status a recorded decision gives its approval (as APPROVALS_CURRENT reads it). */
const statusOf = (d: ApprovalDecision & { expired?: boolean }) =>
  d.expired ? "expired" : d.approved ? "approved" : typeof d.response === "string" ? "responded" : "rejected";

/** Whom a request that names no decider is checked as (the app's routes always name one; it is recorded only when named). */
const API_DECIDES: Decider = { email: null, via: "api" };

/** A policy as `GET /runs/:id` shows it. */
const deciderView = (p: DeciderPolicy): NonNullable<ApprovalView["deciders"]> => ({ ask: p.ask ?? null, allow_initiator: !!p.allowInitiator });

/** The approval_recorded event's data: who or what decided, and the person and way when one did. */
const recordedEvent = (id: string, d: ApprovalDecision) => ({
  approval_id: id,
  status: statusOf(d),
  by: d.by,
  ...(d.decider ? { decider: d.decider } : {}),
  ...(d.args !== undefined ? { edited: true } : {}),
});

/**
 * The approvals of one run, in its SQLite: asked, decided, expired, voided.
 * A decision and an expiry are recorded the same way, in one row: a journal step
 * under the approval's key. Replay hands it to the gate; the approval's status
 * (approvals_current), the run's status (running again: run_current) and the
 * approval_recorded event watchers see (recordedEvents) are read from it.
 */
export class RunApprovals {
  /** Its emails that were not delivered. */
  readonly failures: MailFailures;

  constructor(
    private readonly host: Pick<RunHost, "sql" | "event" | "noted">,
    private readonly journal: SqliteJournalStore,
  ) {
    this.failures = new MailFailures(host.sql);
  }

  private get sql() {
    return this.host.sql;
  }

  /**
   * Stores a pending approval once (a replay that asks again finds it), before its
   * approver is told: the run's record, decidable by API from now on.
   */
  request(p: PendingApproval, now: number, ttlMs: number): void {
    const inserted = this.sql
      .all`INSERT INTO approvals (id, key, call_path, worker_chain, tool, args, description, notify, deciders, kind, status, created_at, expires_at, input_schema, asked_step)
      VALUES (${p.id}, ${p.key}, ${p.callPath}, ${json(p.workerChain)}, ${p.tool}, ${json(p.args)}, ${p.description}, ${p.notify ?? null}, ${p.deciders ? json(p.deciders) : null}, ${p.kind ?? null}, 'pending', ${now}, ${now + ttlMs},
        ${p.inputSchema ? json(p.inputSchema) : null},
        (SELECT coalesce(max(seq), 0) FROM journal))
      ON CONFLICT (id) DO NOTHING RETURNING id`;
    if (inserted.length) this.host.event("approval_requested", { approval_id: p.id, tool: p.tool, worker_chain: p.workerChain, description: p.description });
  }

  /** When a recorded approval expires (what its links carry). */
  expiresAt(approvalId: string): number {
    const row = this.sql.one<Pick<ApprovalRow, "expires_at">>`SELECT expires_at FROM approvals WHERE id = ${approvalId}`;
    if (!row) throw new Error(`approval ${approvalId} is not recorded: the run records an approval before it is notified`);
    return row.expires_at;
  }

  /**
   * Only a pending, unexpired approval of a run that has not ended can be decided,
   * by someone its policy admits (`refusalOf`; `initiator`: who started the run),
   * and changed (edited, answered in its place) only as call-changes.ts allows;
   * deciding one whose expiry has come records its rejection instead. `recorded`:
   * something was written, so the run must replay.
   */
  decide(
    approvalId: string,
    d: DecisionRequest,
    run: { status: RunStatusName; initiator: string | null },
    now: number,
  ): { answer: Answer<Decided>; recorded: boolean } {
    const refused = (answer: Answer<Decided>) => ({ answer, recorded: false });
    // Before anything else: a stranger's reply must not even record an expiry.
    if (d.replyFrom !== undefined && !this.recipients(approvalId).includes(lower(d.replyFrom))) {
      return refused({ ok: false, status: 403, error: "the reply does not come from an address this approval was emailed to" });
    }
    const ap = this.sql.one<
      Pick<ApprovalRow, "id" | "key" | "status" | "expires_at" | "tool" | "args" | "worker_chain" | "deciders" | "kind" | "input_schema">
    >`SELECT id, key, status, expires_at, tool, args, worker_chain, deciders, kind, input_schema FROM ${APPROVALS_CURRENT} AS approvals_current WHERE id = ${approvalId}`;
    if (!ap) return refused({ ok: false, status: 404, error: `unknown approval "${approvalId}" for this run` });
    const mismatch = requestMismatch(ap, d);
    if (mismatch) return refused({ ok: false, status: 400, error: mismatch });
    const decider = d.decider ?? API_DECIDES;
    const refusal = refusalOf(ap.deciders ? parse(ap.deciders) : undefined, decider, run.initiator);
    if (refusal) {
      // Logged without the address: the code and the way are enough to alert on.
      logRunEvent(this.sql, "approval_refused", { approval_id: ap.id, via: decider.via, refusal: refusal.code });
      return refused({ ok: false, status: 403, error: refusal.reason });
    }
    if (ap.status === "expired") return refused(EXPIRED_ANSWER);
    // Also a still-pending row of a run that ended before voiding existed.
    if (TERMINAL.includes(run.status) && (ap.status === "pending" || ap.status === "voided"))
      return refused({ ok: false, status: 409, error: `${runEnded(run.status)}; its approvals are void` });
    if (ap.status !== "pending") return refused({ ok: false, status: 409, error: `approval already ${ap.status}` });
    if (now >= ap.expires_at) {
      this.resolve(ap, EXPIRED);
      return { answer: EXPIRED_ANSWER, recorded: true };
    }
    // Its content last: only a decision that would be taken pays for checking it.
    const change = changeOf(ap, d);
    if ("problem" in change) return refused({ ok: false, status: 400, error: change.problem });
    const remember =
      d.remember && d.decision === "approve" ? { worker: parse<string[]>(ap.worker_chain).at(-1)!, tool: ap.tool, args: parse(ap.args) } : undefined;
    const decision: ApprovalDecision = {
      approved: d.decision === "approve",
      by: d.by,
      ...(d.decider
        ? {
            decider: {
              email: d.decider.email === null ? null : recordedAddress(d.decider.email),
              via: d.decider.via,
              ...(d.decider.slack ? { slack: d.decider.slack } : {}),
            },
          }
        : {}),
      ...(d.note ? { note: d.note } : {}),
      ...(d.answer !== undefined ? { answer: d.answer } : {}),
      ...change,
      ...(remember ? { remember } : {}),
    };
    this.resolve(ap, decision);
    const status = statusOf(decision) as Decided["status"];
    return { answer: { ok: true, approved: decision.approved, status, edited: decision.args !== undefined }, recorded: true };
  }

  /** Records the rejection of every pending approval whose expiry has come; returns how many. */
  expireDue(now: number): number {
    const due = this.sql.all<
      Pick<ApprovalRow, "id" | "key" | "args">
    >`SELECT id, key, args FROM ${APPROVALS_CURRENT} AS approvals_current WHERE status = 'pending' AND expires_at <= ${now}`;
    for (const ap of due) this.resolve(ap, EXPIRED);
    return due.length;
  }

  /** A run that ended voids what is still pending: nobody can decide it any more. */
  voidPending(now: number): void {
    this.sql
      .run`UPDATE approvals SET status = 'voided', decided_at = ${now} WHERE id IN (SELECT id FROM ${APPROVALS_CURRENT} AS approvals_current WHERE status = 'pending')`;
  }

  /**
   * Records the request email to `to` — sent, to be tried again at `retryAt`, or given
   * up — and plans its follow-ups, timed from when the approval was asked: a reminder
   * to the same address (none when its request was given up: it cannot reach them),
   * an escalation to others. Idempotent: a retried notification plans nothing twice.
   */
  planMail(approvalId: string, to: string, now: number, plan: FollowUp | undefined, request: "sent" | "given_up" | { retryAt: number }): void {
    const asked = this.sql.one<Pick<ApprovalRow, "created_at">>`SELECT created_at FROM approvals WHERE id = ${approvalId}`!.created_at;
    const add = (kind: MailKind, recipient: string, due: number, sent: number | null) =>
      this.sql
        .run`INSERT INTO approval_mail (approval_id, kind, recipient, due_at, sent_at) VALUES (${approvalId}, ${kind}, ${lower(recipient)}, ${due}, ${sent}) ON CONFLICT DO NOTHING`;
    if (request === "sent")
      this.sql.run`INSERT INTO approval_mail (approval_id, kind, recipient, due_at, sent_at) VALUES (${approvalId}, 'request', ${lower(to)}, ${now}, ${now})
        ON CONFLICT DO UPDATE SET sent_at = excluded.sent_at`;
    else if (request !== "given_up") add("request", to, request.retryAt, null);
    if (plan?.remindAfterMs && request !== "given_up") add("reminder", to, asked + plan.remindAfterMs, null);
    if (plan?.escalateAfterMs) for (const r of plan.escalateTo ?? []) add("escalation", r, asked + plan.escalateAfterMs, null);
  }

  /**
   * The emails due now of approvals still pending (follow-ups, requests tried again),
   * claimed (marked sent) before they go out: a crash between claim and send loses
   * that email, never repeats it.
   */
  claimDueMail(now: number): DueMail[] {
    const due = this.sql.all<
      Pick<ApprovalMailRow, "approval_id" | "recipient" | "kind">
    >`SELECT m.approval_id, m.kind, m.recipient FROM approval_mail m JOIN ${APPROVALS_CURRENT} a ON a.id = m.approval_id
      WHERE m.sent_at IS NULL AND m.due_at <= ${now} AND a.status = 'pending' AND a.expires_at > m.due_at ORDER BY m.due_at, m.recipient`;
    const views = new Map(this.list().map((a) => [a.id, a]));
    return due.map((m) => {
      this.sql.run`UPDATE approval_mail SET sent_at = ${now} WHERE approval_id = ${m.approval_id} AND kind = ${m.kind} AND recipient = ${m.recipient}`;
      const first = this.sql.one<
        Pick<ApprovalMailRow, "recipient">
      >`SELECT recipient FROM approval_mail WHERE approval_id = ${m.approval_id} AND kind = 'request'`;
      return {
        kind: m.kind,
        recipient: m.recipient,
        originallyTo: m.kind === "request" ? null : (first?.recipient ?? null),
        approval: views.get(m.approval_id)!,
      };
    });
  }

  /** A send that failed for sure (the binding threw) is tried again at `retryAt`. */
  unclaim(m: DueMail, retryAt: number): void {
    this.sql
      .run`UPDATE approval_mail SET sent_at = NULL, due_at = ${retryAt} WHERE approval_id = ${m.approval.id} AND kind = ${m.kind} AND recipient = ${m.recipient}`;
  }

  /**
   * A send given up: nothing left to send, and its recipient never got it (no reply
   * from them decides). A request given up takes its reminder along (it could not reach them either).
   */
  dropMail(m: DueMail): void {
    this.sql.run`DELETE FROM approval_mail WHERE approval_id = ${m.approval.id} AND kind = ${m.kind} AND recipient = ${m.recipient}`;
    if (m.kind === "request")
      this.sql.run`DELETE FROM approval_mail WHERE approval_id = ${m.approval.id} AND kind = 'reminder' AND recipient = ${m.recipient} AND sent_at IS NULL`;
  }

  /** Every address this approval was emailed to (lowercase): who may decide it by reply. */
  recipients(approvalId: string): string[] {
    return this.sql.all<Pick<ApprovalMailRow, "recipient">>`SELECT recipient FROM approval_mail WHERE approval_id = ${approvalId} AND sent_at IS NOT NULL`.map(
      (r) => r.recipient,
    );
  }

  /** What a paused run waits for next: the earliest pending expiry or follow-up email; null when nothing. */
  nextWakeUp(): number | null {
    const mail = this.sql.one<AtRow>`SELECT min(m.due_at) AS at FROM approval_mail m JOIN ${APPROVALS_CURRENT} a ON a.id = m.approval_id
      WHERE m.sent_at IS NULL AND a.status = 'pending' AND a.expires_at > m.due_at`?.at;
    const expiry = this.earliestExpiry();
    if (mail == null) return expiry;
    return expiry === null ? mail : Math.min(mail, expiry);
  }

  /** When the earliest pending approval expires, or null when none is pending. */
  earliestExpiry(): number | null {
    return this.sql.one<AtRow>`SELECT min(expires_at) AS at FROM ${APPROVALS_CURRENT} AS approvals_current WHERE status = 'pending'`?.at ?? null;
  }

  /** Whether any of these approvals was decided or expired (e.g. while the activation that paused on them ran). */
  anyResolved(ids: string[]): boolean {
    return ids.some(
      (id) => this.sql.one<Pick<ApprovalRow, "status">>`SELECT status FROM ${APPROVALS_CURRENT} AS approvals_current WHERE id = ${id}`?.status !== "pending",
    );
  }

  list(): ApprovalView[] {
    const failures = this.failures.byApproval();
    return this.sql.all<ApprovalRow>`SELECT * FROM ${APPROVALS_CURRENT} AS approvals_current ORDER BY created_at, id`.map((r) => ({
      id: r.id,
      kind: r.kind ?? "approval",
      status: r.status,
      tool: r.tool,
      args: parse(r.args),
      description: r.description,
      worker_chain: parse(r.worker_chain),
      call_path: r.call_path,
      notify: r.notify ?? null,
      deciders: r.deciders ? deciderView(parse(r.deciders)) : null,
      note: r.note ?? null,
      answer: r.answer ?? null,
      decided_by: r.decided_by ?? null,
      by: r.decider ? parse(r.decider) : null,
      ...changeView(r),
      created_at: r.created_at,
      decided_at: r.decided_at ?? null,
      expires_at: r.expires_at,
      email_failures: failures.get(r.id) ?? [],
    }));
  }

  /**
   * For watchers: the approval_recorded event each decision step implies, by journal
   * key. Decisions of objects older than schema version 4 have their event in the events table.
   */
  recordedEvents(): Map<string, (decision: ApprovalDecision) => Record<string, unknown>> {
    const rows = this.sql.all<Pick<ApprovalRow, "id" | "key">>`SELECT id, key FROM approvals
      WHERE id NOT IN (SELECT data ->> '$.approval_id' FROM events WHERE type = 'approval_recorded' AND data ->> '$.approval_id' IS NOT NULL)`;
    return new Map(rows.map((r) => [r.key, (d: ApprovalDecision) => recordedEvent(r.id, d)]));
  }

  /** One row: the journal step (see the class comment), bound to the arguments it was asked for. */
  private resolve(ap: Pick<ApprovalRow, "id" | "key" | "args">, decision: ApprovalDecision): void {
    this.journal.record(ap.key, bindsArguments(ap.key) ? { ...decision, args_hash: approvedArgs(ap.args) } : decision);
    this.host.noted("approval_recorded", recordedEvent(ap.id, decision));
  }
}
