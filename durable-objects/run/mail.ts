/**
 * A run's approval emails: the request, reminders, escalations. Owns no table (it
 * plans and claims mail through RunApprovals). Needs from its host: `ctx` (storage
 * transactions, the object's id), `env` (the mail binding and vars), `event`
 * (approval_emailed…) and `activeCatalog` (a worker's follow-up plan).
 */

import { approvalRecipients, missingEmailConfig, sendApprovalEmail, type EmailOutcome } from "../../src/email/approval-notifier";
import { messageOf, RunInterrupted, type PendingApproval } from "../../src/engine";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";
import type { RunRow } from "../rows";
import { parse } from "../sql";

/** A reminder or escalation that could not be sent is tried again this much later. */
const FOLLOW_UP_RETRY_MS = 5 * 60_000;

const warned = new Set<string>();
/** Once per isolate and message: a missing email setup is a configuration fact, not news on every approval or answer. */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`edgework: ${message}`);
}

/** What the notifier step records: whom the request went to (listed as a To header lists them), or what is missing to send it. */
export type RequestOutcome = EmailOutcome & { expires_at: number };

/** The run a mail is about: its id and what started it (shown in the mail). */
export interface MailRun {
  id: string;
  trigger: unknown;
}

export const mailRun = (run: RunRow): MailRun => ({ id: run.id, trigger: parse(run.trigger) });

/** The emails of one run's approvals: the request (a journal step of the engine), reminders and escalations. */
export class RunMail {
  constructor(
    private readonly host: Pick<RunHost, "ctx" | "env" | "event" | "activeCatalog">,
    private readonly approvals: RunApprovals,
  ) {}

  /**
   * The engine's approval notifier (a journal step: once per approval): emails each
   * recipient of the approval the run recorded (`approvalRecipients`), a link bound to
   * each. A failed send interrupts the activation so the alarm retries it later, skipping
   * those already emailed; the approval is decidable by API meanwhile.
   */
  async requestApproval(p: PendingApproval, run: MailRun): Promise<RequestOutcome> {
    const { ctx, env } = this.host;
    const expiresAt = this.approvals.expiresAt(p.id);
    const recipients = approvalRecipients(env, p);
    const missing = missingEmailConfig(env, recipients[0]);
    if (missing.length) {
      warnOnce(`approval emails are off (missing ${missing.join(", ")}); approvals stay reachable by API and on the run page`);
      return { emailed: false, missing, expires_at: expiresAt };
    }
    // The worker's follow-up plan, from the catalog the run is on.
    const plan = this.host.activeCatalog()?.get(p.workerChain.at(-1)!)?.followUp;
    const emailed = new Set(this.approvals.recipients(p.id));
    for (const to of recipients.filter((r) => !emailed.has(r.toLowerCase()))) {
      try {
        await sendApprovalEmail(env, p, { ...run, objectId: ctx.id.toString() }, expiresAt, to);
      } catch (err) {
        throw new RunInterrupted("retry", `sending the approval email for ${p.tool} failed: ${messageOf(err)}`);
      }
      ctx.storage.transactionSync(() => {
        this.approvals.planMail(p.id, to, Date.now(), plan);
        this.host.event("approval_emailed", { approval_id: p.id, to });
      });
    }
    return { emailed: true, to: recipients.join(", "), expires_at: expiresAt };
  }

  /**
   * Sends the reminders and escalations that are due. Each is claimed (and the claim
   * made durable) before it is sent: never twice; a crash in between loses that one.
   * A send that fails is put back for a retry in five minutes.
   */
  async sendFollowUps(run: MailRun): Promise<void> {
    const { ctx, env } = this.host;
    const now = Date.now();
    const due = ctx.storage.transactionSync(() => this.approvals.claimDueMail(now));
    if (!due.length) return;
    await ctx.storage.sync();
    for (const m of due) {
      const a = m.approval;
      const subject = {
        id: a.id,
        workerChain: a.worker_chain,
        tool: a.tool,
        args: a.args,
        notify: a.notify ?? undefined,
        description: a.description,
        ...(a.kind === "question" ? { kind: a.kind } : {}),
      };
      try {
        const outcome = await sendApprovalEmail(env, subject, { ...run, objectId: ctx.id.toString() }, a.expires_at, m.recipient, {
          kind: m.kind,
          originallyTo: m.originallyTo,
        });
        if (outcome.emailed) this.host.event(`approval_${m.kind}_emailed`, { approval_id: a.id, to: m.recipient });
      } catch (err) {
        this.approvals.unclaim(m, now + FOLLOW_UP_RETRY_MS);
        this.host.event("approval_email_failed", { approval_id: a.id, kind: m.kind, to: m.recipient, error: messageOf(err) });
      }
    }
  }
}
