/**
 * A run's approval emails that were not delivered: per approval, kind and recipient,
 * the latest refusal (code and a reason that names no address), how many sends of it
 * failed, and whether it was given up. Written by mail.ts; read for the run's view
 * (each approval's `email_failures`). Owns the `mail_failures` table, made on first
 * use (schema.ts). Needs the SQL; its caller runs each write inside its transaction.
 */

import type { SendFailure } from "../../src/email/send-failure";
import type { EmailFailureView } from "../../src/runs/types";
import type { MailFailureRow, MailKind } from "../rows";
import { madeOnFirstUse, makeOnFirstUse } from "../schema";
import type { Sql } from "../sql";

/** One approval email: approval_mail's key. */
export interface MailKey {
  approvalId: string;
  kind: MailKind;
  /** Lowercase, as approval_mail stores it. */
  recipient: string;
}

export class MailFailures {
  constructor(private readonly sql: Sql) {}

  /** Failed sends of this email so far. */
  attempts(m: MailKey): number {
    return this.get(m)?.attempts ?? 0;
  }

  /** This email's latest failure, if any. */
  get(m: MailKey): MailFailureRow | undefined {
    if (!this.made()) return undefined;
    return this.sql.one<MailFailureRow>`SELECT * FROM mail_failures WHERE approval_id = ${m.approvalId} AND kind = ${m.kind} AND recipient = ${m.recipient}`;
  }

  /** Records its `attempts`-th failed send; `final`: it is not tried again. */
  failed(m: MailKey, f: SendFailure, attempts: number, final: boolean, now: number): void {
    makeOnFirstUse(this.sql, "mail_failures");
    this.sql.run`INSERT INTO mail_failures (approval_id, kind, recipient, attempts, code, reason, final, at)
      VALUES (${m.approvalId}, ${m.kind}, ${m.recipient}, ${attempts}, ${f.code}, ${f.reason}, ${final ? 1 : 0}, ${now})
      ON CONFLICT (approval_id, kind, recipient) DO UPDATE SET attempts = excluded.attempts, code = excluded.code, reason = excluded.reason, final = excluded.final, at = excluded.at`;
  }

  /** It went out after all: nothing to show any more. */
  delivered(m: MailKey): void {
    if (this.made()) this.sql.run`DELETE FROM mail_failures WHERE approval_id = ${m.approvalId} AND kind = ${m.kind} AND recipient = ${m.recipient}`;
  }

  /** Every failure, by approval id, oldest first. */
  byApproval(): Map<string, EmailFailureView[]> {
    const out = new Map<string, EmailFailureView[]>();
    if (!this.made()) return out;
    for (const r of this.sql.all<MailFailureRow>`SELECT * FROM mail_failures ORDER BY at, approval_id, kind, recipient`) {
      const list = out.get(r.approval_id) ?? [];
      list.push({ kind: r.kind, to: r.recipient, reason: r.reason, code: r.code, retrying: r.final === 0, attempts: r.attempts, at: r.at });
      out.set(r.approval_id, list);
    }
    return out;
  }

  /** Asked each time, never cached: a transaction that made the table may still roll back. */
  private made(): boolean {
    return madeOnFirstUse(this.sql, "mail_failures");
  }
}
