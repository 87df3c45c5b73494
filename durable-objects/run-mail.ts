import { sendApprovalEmail, type EmailOutcome } from "../src/email/approval-notifier";
import { messageOf, RunInterrupted, type Catalog, type PendingApproval } from "../src/engine";
import type { RunApprovals } from "./run-approvals";

/** A reminder or escalation that could not be sent is tried again this much later. */
const FOLLOW_UP_RETRY_MS = 5 * 60_000;

let warned = false;
/** Once per isolate: a missing email setup is a configuration fact, not news on every approval. */
function warnOnce(message: string): void {
  if (warned) return;
  warned = true;
  console.warn(`edgework: ${message}`);
}

/** The run a mail is about: its id and what started it (shown in the mail). */
export interface MailRun {
  id: string;
  trigger: unknown;
}

/** The emails of one run's approvals: the request (a journal step of the engine), reminders and escalations. */
export class RunMail {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly approvals: RunApprovals,
    private readonly event: (type: string, data: Record<string, unknown>) => void,
    /** The catalog of the activation in progress: a worker's follow-up plan. */
    private readonly catalog: () => Catalog | undefined,
  ) {}

  /**
   * The engine's approval notifier (a journal step: once per approval): emails the
   * approver about the approval the run recorded. A failed send interrupts the
   * activation so the alarm retries it later; the approval is decidable by API meanwhile.
   */
  async requestApproval(p: PendingApproval, run: MailRun): Promise<EmailOutcome & { expires_at: number }> {
    const expiresAt = this.approvals.expiresAt(p.id);
    let outcome: EmailOutcome;
    try {
      outcome = await sendApprovalEmail(this.env, p, { ...run, objectId: this.ctx.id.toString() }, expiresAt);
    } catch (err) {
      throw new RunInterrupted("retry", `sending the approval email for ${p.tool} failed: ${messageOf(err)}`);
    }
    if (outcome.emailed) {
      const plan = this.catalog()?.get(p.workerChain.at(-1)!)?.followUp;
      this.ctx.storage.transactionSync(() => this.approvals.planMail(p.id, outcome.to, Date.now(), plan));
      this.event("approval_emailed", { approval_id: p.id, to: outcome.to });
    } else warnOnce(`approval emails are off (missing ${outcome.missing.join(", ")}); approvals stay reachable by API and on the run page`);
    return { ...outcome, expires_at: expiresAt };
  }

  /**
   * Sends the reminders and escalations that are due. Each is claimed (and the claim
   * made durable) before it is sent: never twice; a crash in between loses that one.
   * A send that fails is put back for a retry in five minutes.
   */
  async sendFollowUps(run: MailRun): Promise<void> {
    const now = Date.now();
    const due = this.ctx.storage.transactionSync(() => this.approvals.claimDueMail(now));
    if (!due.length) return;
    await this.ctx.storage.sync();
    for (const m of due) {
      const a = m.approval;
      const subject = { id: a.id, workerChain: a.worker_chain, tool: a.tool, args: a.args, notify: a.notify ?? undefined };
      try {
        const outcome = await sendApprovalEmail(this.env, subject, { ...run, objectId: this.ctx.id.toString() }, a.expires_at, { kind: m.kind as "reminder" | "escalation", to: m.recipient, originallyTo: m.originallyTo });
        if (outcome.emailed) this.event(`approval_${m.kind}_emailed`, { approval_id: a.id, to: m.recipient });
      } catch (err) {
        this.approvals.unclaim(m, now + FOLLOW_UP_RETRY_MS);
        this.event("approval_email_failed", { approval_id: a.id, kind: m.kind, to: m.recipient, error: messageOf(err) });
      }
    }
  }
}
