/**
 * A run's approval emails: the request, reminders, escalations. Owns no table (it
 * plans and claims mail through RunApprovals, records what was not delivered through
 * its MailFailures). Needs from its host: `ctx` (storage transactions, the object's id),
 * `env` (the mail binding and vars), `event` (approval_emailed…) and `activeCatalog`
 * (a worker's follow-up plan).
 *
 * A send the platform refuses never stops the run: a lasting refusal (send-failure.ts:
 * a recipient it may not mail, an unverified sender, a quota) is given up at once, any
 * other is tried again by the run's alarm (RETRY_MS, doubling) up to MAX_ATTEMPTS
 * sends, then given up. Either way the run pauses as it would have, its expiry armed,
 * the approval decidable from the API, the page and the inbox, which say the email was
 * not delivered and why (`approval_email_failed` events; each approval's `email_failures`).
 */

import { approvalRecipients, missingEmailConfig, sendApprovalEmail, type EmailOutcome } from "../../src/email/approval-notifier";
import { sendFailure, type SendFailure } from "../../src/email/send-failure";
import type { PendingApproval } from "../../src/engine";
import type { FollowUp } from "../../src/engine/types/worker";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";
import type { MailKey } from "./mail-failures";
import type { RunRow } from "../rows";
import { parse } from "../sql";

/** Sends of one approval email (the first included) before it is given up. */
export const MAX_ATTEMPTS = 5;
/** The first retry's delay; each next one doubles it (1, 2, 4, 8 minutes). */
export const RETRY_MS = 60_000;

const warned = new Set<string>();
/** Once per isolate and message: a missing email setup is a configuration fact, not news on every approval or answer. */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`edgework: ${message}`);
}

/** A recipient the request did not reach (yet): why, and whether the alarm tries again. */
export interface NotDelivered {
  to: string;
  error: string;
  code: string;
  retry: boolean;
}

/**
 * What the notifier step records (its journal value, so a replay neither sends nor
 * fails again): whom the request went to (listed as a To header lists them), whom
 * not and why, or what is missing to send it.
 */
export type RequestOutcome = (EmailOutcome | { emailed: boolean; to: string; not_delivered?: NotDelivered[] }) & { expires_at: number };

/** The run a mail is about: its id and what started it (shown in the mail). */
export interface MailRun {
  id: string;
  trigger: unknown;
}

export const mailRun = (run: RunRow): MailRun => ({ id: run.id, trigger: parse(run.trigger) });

const lower = (address: string) => address.trim().toLowerCase();

/** The emails of one run's approvals: the request (a journal step of the engine), reminders and escalations. */
export class RunMail {
  constructor(
    private readonly host: Pick<RunHost, "ctx" | "env" | "event" | "activeCatalog">,
    private readonly approvals: RunApprovals,
  ) {}

  /**
   * The engine's approval notifier (a journal step: once per approval): emails each
   * recipient of the approval the run recorded (`approvalRecipients`), a link bound to
   * each, and plans the follow-ups. A refused send is recorded and, unless the refusal
   * is lasting, tried again by the alarm; it never throws for one, so the run pauses
   * now. A replay after a crash in the middle skips the recipients already done.
   */
  async requestApproval(p: PendingApproval, run: MailRun): Promise<RequestOutcome> {
    const expiresAt = this.approvals.expiresAt(p.id);
    const recipients = approvalRecipients(this.host.env, p);
    const missing = missingEmailConfig(this.host.env, recipients[0]);
    if (missing.length) {
      warnOnce(`approval emails are off (missing ${missing.join(", ")}); approvals stay reachable by API and on the run page`);
      return { emailed: false, missing, expires_at: expiresAt };
    }
    // The worker's follow-up plan, from the catalog the run is on.
    const plan = this.host.activeCatalog()?.get(p.workerChain.at(-1)!)?.followUp;
    const delivered: string[] = [];
    const notDelivered: NotDelivered[] = [];
    for (const to of recipients) {
      // Each send lets requests in: one that cancelled the run or decided the approval ends the asking (read after the last await).
      if (this.approvals.anyResolved([p.id])) break;
      const refused = await this.request(p, run, expiresAt, to, plan);
      if (refused) notDelivered.push(refused);
      else delivered.push(to);
    }
    return { emailed: delivered.length > 0, to: delivered.join(", "), ...(notDelivered.length ? { not_delivered: notDelivered } : {}), expires_at: expiresAt };
  }

  /**
   * Sends the emails that are due: reminders, escalations, requests tried again. Each
   * is claimed (and the claim made durable) before it is sent: never twice; a crash in
   * between loses that one. A refused send is tried again later or given up (as a request is).
   */
  async sendFollowUps(run: MailRun): Promise<void> {
    const { ctx, env } = this.host;
    const due = ctx.storage.transactionSync(() => this.approvals.claimDueMail(Date.now()));
    if (!due.length) return;
    await ctx.storage.sync();
    for (const m of due) {
      const a = m.approval;
      // Decided, expired or voided (the run cancelled) since it was claimed, by a request a send before let in: not sent.
      if (this.approvals.anyResolved([a.id])) {
        ctx.storage.transactionSync(() => this.approvals.dropMail(m));
        continue;
      }
      const subject = {
        id: a.id,
        workerChain: a.worker_chain,
        tool: a.tool,
        args: a.args,
        notify: a.notify ?? undefined,
        description: a.description,
        ...(a.kind === "question" ? { kind: a.kind } : {}),
        ...(a.input_schema ? { inputSchema: a.input_schema } : {}),
      };
      const followUp = m.kind === "request" ? undefined : { kind: m.kind, originallyTo: m.originallyTo };
      let failure: SendFailure | null = null;
      try {
        // Mail switched off since it was planned: claimed, not sent.
        if (!(await sendApprovalEmail(env, subject, { ...run, objectId: ctx.id.toString() }, a.expires_at, m.recipient, followUp)).emailed) continue;
      } catch (err) {
        failure = sendFailure(err);
      }
      const key: MailKey = { approvalId: a.id, kind: m.kind, recipient: m.recipient };
      ctx.storage.transactionSync(() => {
        if (!failure) {
          this.approvals.failures.delivered(key);
          this.host.event(m.kind === "request" ? "approval_emailed" : `approval_${m.kind}_emailed`, { approval_id: a.id, to: m.recipient });
          return;
        }
        const retryAt = this.failed(key, m.recipient, failure, Date.now());
        if (retryAt === null) this.approvals.dropMail(m);
        else this.approvals.unclaim(m, retryAt);
      });
    }
  }

  /** The request to one recipient: sent and its follow-ups planned (null), or refused (why; tried again unless lasting). */
  private async request(p: PendingApproval, run: MailRun, expiresAt: number, to: string, plan: FollowUp | undefined): Promise<NotDelivered | null> {
    const { ctx, env } = this.host;
    const key: MailKey = { approvalId: p.id, kind: "request", recipient: lower(to) };
    // Done before a crash that kept the step from being recorded: not sent again.
    if (this.approvals.recipients(p.id).includes(key.recipient)) return null;
    const earlier = this.approvals.failures.get(key);
    if (earlier?.final) return { to, error: earlier.reason, code: earlier.code, retry: false };
    let failure: SendFailure | null = null;
    try {
      await sendApprovalEmail(env, p, { ...run, objectId: ctx.id.toString() }, expiresAt, to);
    } catch (err) {
      failure = sendFailure(err);
    }
    const now = Date.now();
    return ctx.storage.transactionSync(() => {
      if (!failure) {
        this.approvals.planMail(p.id, to, now, plan, "sent");
        this.host.event("approval_emailed", { approval_id: p.id, to });
        return null;
      }
      const retryAt = this.failed(key, to, failure, now);
      this.approvals.planMail(p.id, to, now, plan, retryAt === null ? "given_up" : { retryAt });
      return { to, error: failure.reason, code: failure.code, retry: retryAt !== null };
    });
  }

  /** Records a refused send (its event, its failure row); returns when to try again, or null: given up. */
  private failed(key: MailKey, to: string, failure: SendFailure, now: number): number | null {
    const attempts = this.approvals.failures.attempts(key) + 1;
    const final = failure.lasting || attempts >= MAX_ATTEMPTS;
    this.approvals.failures.failed(key, failure, attempts, final, now);
    this.host.event("approval_email_failed", { approval_id: key.approvalId, kind: key.kind, to, error: failure.reason, code: failure.code, retry: !final });
    return final ? null : now + RETRY_MS * 2 ** (attempts - 1);
  }
}
