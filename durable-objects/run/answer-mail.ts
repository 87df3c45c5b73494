/**
 * A conversation by mail (an email trigger with `reply: true`): each answer the run
 * gives to a message that came by mail — the first, and each reply — is mailed back
 * to the sender with a Reply-To that carries the conversation's signed reference
 * (conversation-id.ts: the sender's reply comes back through it), threaded for mail
 * clients (In-Reply-To, References) under the message it answers. An earlier answer
 * is referenced by the Message-ID it went out with (the platform's, when the send
 * names one: `message_id` of its answer_emailed event), else by ours.
 *
 * An outbox, as approval follow-ups are (approvals.ts claimDueMail): `plan` writes
 * the answer's row in the transaction that records the run's success; `sendDue`
 * claims due rows (marks them sent, durably) before it sends them, so none goes out
 * twice. A send refused for a lasting reason (send-failure.ts) is given up at once;
 * another is put back for the alarm to retry later, up to MAX_ATTEMPTS. Each refusal
 * is an `answer_email_failed` event with its reason (`retry: false` once given up:
 * the run's `answer_email_failures`). A row leaves the table when its send's outcome
 * is known, so one still claimed when the next sends start was claimed by an
 * activation that died first: it is given up too (it may or may not have gone out;
 * the answer stays on the run). Owns the `answer_mail` table (made on first use).
 * Needs from its host: `ctx` (transactions, the object's id), `env` (the send
 * binding, APPROVAL_SECRET, APPROVAL_REPLY_DOMAIN), the SQL, `row`, `event` and `now` (the run's clock).
 */

import { answerMime } from "../../src/email/answer-mail";
import { mailer } from "../../src/email/mailer";
import { sendFailure } from "../../src/email/send-failure";
import type { RunOutcome } from "../../src/engine";
import { conversationMessageId, conversationReference } from "../../src/tokens/conversation-id";
import { domainOf, emailThread, missingAnswerMail, type EmailThread } from "../../src/triggers/email-thread";
import type { AnswerMailRow, AtRow, EventRow } from "../rows";
import { madeOnFirstUse, makeOnFirstUse } from "../schema";
import { parse } from "../sql";
import { answerText, type RunConversation } from "./conversation";
import type { RunHost } from "./host";
import { warnOnce } from "./mail";

/** Sends of one answer refused for a reason that may pass, before it is given up (an `answer_email_failed` event says so). */
const MAX_ATTEMPTS = 5;
/** What the event says of an answer whose claim outlived its activation. */
const LOST = "the activation sending this answer ended before the send returned: it may not have been sent, and is not sent again";
/** The first retry's delay; each next one doubles it. */
const RETRY_MS = 60_000;

export class RunAnswerMail {
  /** Whether this object has the table: only `plan` makes it, so a "no" holds until `plan`, which forgets the answer. */
  private made?: boolean;

  constructor(
    private readonly host: Pick<RunHost, "ctx" | "env" | "sql" | "row" | "event" | "now">,
    private readonly conversation: RunConversation,
  ) {}

  /**
   * In the transaction that records `outcome`: a success of a conversing run plans
   * the mail of its answer, unless the message it answers came by API (its sender
   * wrote no mail to thread under) or mail is not configured (a warning, once).
   */
  plan(outcome: RunOutcome): void {
    const run = this.host.row();
    if (outcome.status !== "succeeded" || !run || !emailThread(parse(run.trigger))) return;
    const later = this.conversation.steps(run.worker).at(-1);
    if (later && !later.email) return;
    const missing = missingAnswerMail(this.host.env);
    if (missing.length) {
      warnOnce(`answers to email conversations are not mailed (missing ${missing.join(", ")})`);
      return;
    }
    if (!this.host.env.APPROVAL_REPLY_DOMAIN)
      warnOnce("answers to email conversations carry no reply address (APPROVAL_REPLY_DOMAIN is not set): a reply starts a new conversation");
    makeOnFirstUse(this.host.sql, "answer_mail");
    // Asked again, not assumed: the transaction this runs in may still roll back, the table with it.
    this.made = undefined;
    this.host.sql.run`INSERT INTO answer_mail (n, due_at) VALUES (${later?.n ?? 1}, ${this.host.now()}) ON CONFLICT DO NOTHING`;
  }

  /** Sends the answers due: each claimed first (never twice), a refused one put back for a later alarm. */
  async sendDue(): Promise<void> {
    if (!this.hasTable()) return;
    const { ctx, sql } = this.host;
    const now = this.host.now();
    const due = ctx.storage.transactionSync(() => {
      // Alarms do not overlap: a claim left from before is one whose activation died before the send returned.
      for (const { n } of sql.all<Pick<AnswerMailRow, "n">>`SELECT n FROM answer_mail WHERE sent_at IS NOT NULL`)
        this.done(n, "answer_email_failed", { message: n, error: LOST, code: "E_UNKNOWN", retry: false });
      const rows = sql.all<AnswerMailRow>`SELECT * FROM answer_mail WHERE sent_at IS NULL AND due_at <= ${now} ORDER BY n`;
      for (const r of rows) sql.run`UPDATE answer_mail SET sent_at = ${now}, attempts = attempts + 1 WHERE n = ${r.n}`;
      return rows;
    });
    if (!due.length) return;
    await ctx.storage.sync();
    for (const { n, attempts } of due) {
      try {
        const { to, messageId } = await this.send(n);
        this.done(n, "answer_emailed", { message: n, to, ...(messageId ? { message_id: messageId } : {}) });
      } catch (err) {
        const f = sendFailure(err);
        const failed = { message: n, error: f.reason, code: f.code, retry: !f.lasting && attempts + 1 < MAX_ATTEMPTS };
        if (!failed.retry) this.done(n, "answer_email_failed", failed);
        else {
          sql.run`UPDATE answer_mail SET sent_at = NULL, due_at = ${now + RETRY_MS * 2 ** attempts} WHERE n = ${n}`;
          this.host.event("answer_email_failed", failed);
        }
      }
    }
  }

  /** An alarm time, brought forward to the next answer due (a retry): the run's alarm sends it. */
  clamp(at: number): number {
    if (!this.hasTable()) return at;
    const next = this.host.sql.one<AtRow>`SELECT min(due_at) AS at FROM answer_mail WHERE sent_at IS NULL`?.at;
    return next == null ? at : Math.min(at, next);
  }

  /** The send of answer `n` came to an outcome: its row goes, with the event that says which. */
  private done(n: number, type: "answer_emailed" | "answer_email_failed", data: Record<string, unknown>): void {
    this.host.ctx.storage.transactionSync(() => {
      this.host.sql.run`DELETE FROM answer_mail WHERE n = ${n}`;
      this.host.event(type, data);
    });
  }

  private hasTable(): boolean {
    return (this.made ??= madeOnFirstUse(this.host.sql, "answer_mail"));
  }

  /** Mails the answer to message `n` (1: the first mail); returns to whom, and the Message-ID it went out with if the platform named one. */
  private async send(n: number): Promise<{ to: string; messageId: string | null }> {
    const { ctx, env, sql } = this.host;
    const run = this.host.row()!;
    const thread = emailThread(parse(run.trigger))!;
    const answer = sql.one<Pick<EventRow, "data">>`SELECT data FROM events WHERE type = 'run_succeeded' ORDER BY seq LIMIT 1 OFFSET ${n - 1}`;
    if (!answer) throw new Error(`the run has no answer ${n}`);
    const objectId = ctx.id.toString();
    const ours = (k: number) => conversationMessageId(objectId, k, domainOf(thread.to), env.APPROVAL_SECRET!);
    const messageId = await ours(n);
    const reference = await conversationReference(objectId, env.APPROVAL_SECRET!);
    if (!messageId || !reference) throw new Error("the run's object id makes no conversation reference");
    // The thread so far: each message that came by mail, and our answer to it as it went out (the last message's answer is this one).
    const theirs = this.theirs(run.worker, thread, n);
    const sentIds = this.sentIds();
    const chain: Array<string | null> = [];
    for (const [k, id] of theirs) chain.push(...(k < n ? [id, sentIds.get(k) ?? (await ours(k))] : [id]));
    const sent = await mailer.send(env, {
      from: thread.to,
      to: thread.from,
      raw: await answerMime({
        from: thread.to,
        to: thread.from,
        subject: thread.subject,
        answer: answerText(parse(answer.data).output),
        messageId,
        ...(env.APPROVAL_REPLY_DOMAIN ? { replyTo: `${reference}@${env.APPROVAL_REPLY_DOMAIN.toLowerCase()}` } : {}),
        inReplyTo: theirs.at(-1)![1],
        thread: chain,
      }),
    });
    return { to: thread.from, messageId: sent.messageId };
  }

  /** The Message-IDs earlier answers went out with, as the platform named them (answer_emailed's `message_id`), by answer number. */
  private sentIds(): Map<number, string> {
    const rows = this.host.sql.all<{ n: number; id: string }>`SELECT data ->> '$.message' AS n, data ->> '$.message_id' AS id FROM events
      WHERE type = 'answer_emailed' AND data ->> '$.message_id' IS NOT NULL`;
    return new Map(rows.map((r) => [r.n, r.id]));
  }

  /** The sender's messages up to `n` that came by mail, by number: the first (the run's input), then each reply; their Message-IDs. */
  private theirs(worker: string, thread: EmailThread, n: number): Array<[number, string | null]> {
    const replies = this.conversation.steps(worker).filter((m) => m.email && m.n <= n);
    return [[1, thread.message_id], ...replies.map((m): [number, string | null] => [m.n, m.email!.message_id])];
  }
}
