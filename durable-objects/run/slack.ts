/**
 * A run's approvals in Slack: the one message each approval (or question) is posted as,
 * and its reminder and escalation, posted in that message's thread. Owns `slack_messages`
 * (schema.ts, made on first use). Needs from its host: `ctx` (transactions), `env` (the
 * bot token, APPROVAL_SECRET that signs the buttons), `sql`, `event`, `activeCatalog` (the
 * worker's `notify.slack` and follow-up plan). Its awaits run inside the seams of its
 * callers (approval.email: the notifier; approval.follow-up).
 *
 * A post Slack refuses never stops the run: it is recorded (`approval_slack_failed`) and
 * the approval stays decidable by email, the page and the API.
 */

import type { PendingApproval } from "../../src/engine";
import { approvalBlocks, approvalFallback, approvalMessage, decidedLine, decidedMessage, followUpText, mrkdwnText } from "../../src/slack/approval-message";
import { slackThread } from "../../src/slack/thread";
import { signSlackAction } from "../../src/slack/action-value";
import { SlackApiError, slackApi } from "../../src/slack/api";
import { describeApproval } from "../../src/http/describe-approval";
import { describedCall } from "../../src/views/described-call";
import { APPROVALS_CURRENT, madeOnFirstUse, makeOnFirstUse } from "../schema";
import type { EventRow } from "../rows";
import { parse } from "../sql";
import { answerText } from "./conversation";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";
import { warnOnce, type MailRun } from "./mail";

/** Where an approval's message is: a conversation id and the message's timestamp (its thread). */
export interface SlackMessageRef {
  channel: string;
  ts: string;
}

/** What the notifier step records of Slack (its journal value with the email's: a replay posts nothing again). */
export type SlackOutcome = ({ posted: true } & SlackMessageRef) | { posted: false; error: string };

/** Slack's ids and timestamps as they may be stored: anything else in an answer is refused. */
const CHANNEL_ID = /^[A-Z0-9]{1,40}$/;
const MESSAGE_TS = /^[0-9]{1,12}\.[0-9]{1,8}$/;

interface SlackRow {
  approval_id: string;
  channel: string;
  ts: string;
  remind_at: number | null;
  escalate_at: number | null;
}

export class RunSlack {
  constructor(
    private readonly host: Pick<RunHost, "ctx" | "env" | "sql" | "event" | "activeCatalog" | "row">,
    private readonly approvals: Pick<RunApprovals, "list">,
  ) {}

  /** Whether the table is made: asked once (every alarm asks, and a look at sqlite_master reads its every row), again after `post` made it. */
  private made?: boolean;
  private has(): boolean {
    return (this.made ??= madeOnFirstUse(this.host.sql, "slack_messages"));
  }

  /**
   * Posts the approval's one message (the described call and its buttons) when its worker
   * says `notify: {slack}`; null when it does not. Once per approval: a replay after a
   * crash between the post and the step's record finds the row and posts nothing.
   */
  async requestApproval(p: PendingApproval, run: MailRun, expiresAt: number): Promise<SlackOutcome | null> {
    const { env } = this.host;
    const worker = this.host.activeCatalog()?.get(p.workerChain.at(-1)!);
    const channel = worker?.slack;
    if (!channel) return null;
    const done = this.message(p.id);
    if (done) return { posted: true, ...done };
    if (!env.SLACK_BOT_TOKEN || !env.APPROVAL_SECRET) {
      const missing = [...(env.SLACK_BOT_TOKEN ? [] : ["SLACK_BOT_TOKEN"]), ...(env.APPROVAL_SECRET ? [] : ["APPROVAL_SECRET"])].join(", ");
      warnOnce(`Slack approvals are off (missing ${missing}); approvals stay reachable by email, API and on the run page`);
      return { posted: false, error: `missing ${missing}` };
    }
    const question = p.kind === "question";
    const message = approvalMessage(channel, {
      runId: run.id,
      workerChain: p.workerChain,
      tool: p.tool,
      ...(question ? { question: p.description } : {}),
      call: describedCall(describeApproval({ worker_chain: p.workerChain, tool: p.tool, args: p.args }), p.args),
      trigger: run.trigger,
      expiresAt,
      editable: !question && p.inputSchema !== undefined,
      value: await signSlackAction({ run: run.id, approval: p.id, exp: expiresAt }, env.APPROVAL_SECRET),
    });
    let posted: { channel?: unknown; ts?: unknown };
    try {
      posted = await slackApi.call(env, "chat.postMessage", message);
    } catch (err) {
      return this.failed(p.id, err);
    }
    if (typeof posted.channel !== "string" || !CHANNEL_ID.test(posted.channel) || typeof posted.ts !== "string" || !MESSAGE_TS.test(posted.ts))
      return this.failed(p.id, new SlackApiError("chat.postMessage", "the answer names no channel id and message ts"));
    const ref = { channel: posted.channel, ts: posted.ts };
    const plan = worker.followUp;
    const now = Date.now();
    this.host.ctx.storage.transactionSync(() => {
      makeOnFirstUse(this.host.sql, "slack_messages");
      // Asked again, not assumed: this transaction may still roll back, the table with it.
      this.made = undefined;
      this.host.sql.run`INSERT INTO slack_messages (approval_id, channel, ts, remind_at, escalate_at)
        VALUES (${p.id}, ${ref.channel}, ${ref.ts}, ${plan?.remindAfterMs ? now + plan.remindAfterMs : null}, ${plan?.escalateAfterMs ? now + plan.escalateAfterMs : null})
        ON CONFLICT DO NOTHING`;
      this.host.event("approval_slack_posted", { approval_id: p.id, ...ref });
    });
    return { posted: true, ...ref };
  }

  /** Where an approval's message was posted, if it was. */
  message(approvalId: string): SlackMessageRef | null {
    if (!this.has()) return null;
    return this.host.sql.one<SlackMessageRef>`SELECT channel, ts FROM slack_messages WHERE approval_id = ${approvalId}` ?? null;
  }

  /**
   * Posts the reminders and escalations due, in their message's thread, for approvals still
   * pending. Each is claimed (set to null, durably) before it is posted: never twice; a crash
   * in between or a refusal loses that one (recorded as an event).
   */
  async sendFollowUps(now: number): Promise<void> {
    if (!this.has()) return;
    const { ctx, sql } = this.host;
    const due = ctx.storage.transactionSync(() => {
      const rows = sql.all<SlackRow>`SELECT m.approval_id, m.channel, m.ts, m.remind_at, m.escalate_at FROM slack_messages m
        JOIN ${APPROVALS_CURRENT} a ON a.id = m.approval_id
        WHERE a.status = 'pending' AND (m.remind_at <= ${now} OR m.escalate_at <= ${now})`;
      for (const r of rows)
        sql.run`UPDATE slack_messages SET remind_at = CASE WHEN remind_at <= ${now} THEN NULL ELSE remind_at END,
          escalate_at = CASE WHEN escalate_at <= ${now} THEN NULL ELSE escalate_at END WHERE approval_id = ${r.approval_id}`;
      return rows;
    });
    if (!due.length) return;
    await ctx.storage.sync();
    const escalateTo = (approvalId: string) => {
      const chain = sql.one<{ worker_chain: string }>`SELECT worker_chain FROM approvals WHERE id = ${approvalId}`;
      const worker = chain ? (JSON.parse(chain.worker_chain) as string[]).at(-1) : undefined;
      return (worker && this.host.activeCatalog()?.get(worker)?.followUp?.escalateTo) || [];
    };
    for (const r of due) {
      const kinds = [
        ...(r.remind_at !== null && r.remind_at <= now ? ["reminder" as const] : []),
        ...(r.escalate_at !== null && r.escalate_at <= now ? ["escalation" as const] : []),
      ];
      for (const kind of kinds) {
        try {
          await slackApi.call(this.host.env, "chat.postMessage", { channel: r.channel, thread_ts: r.ts, text: followUpText(kind, escalateTo(r.approval_id)) });
          this.host.event(`approval_slack_${kind}`, { approval_id: r.approval_id, channel: r.channel, ts: r.ts });
        } catch (err) {
          this.host.event("approval_slack_failed", { approval_id: r.approval_id, kind, error: slackError(err) });
        }
      }
    }
  }

  /**
   * Updates each message whose approval was decided (by any way: Slack, link, reply, API), expired or
   * voided, once, to show the outcome and who decided, without its buttons. Claimed (`shown`) before
   * the update: a crash in between leaves the buttons, whose presses the run then refuses (409).
   */
  async showDecisions(): Promise<void> {
    if (!this.has()) return;
    const { ctx, sql } = this.host;
    const now = Date.now();
    const due = ctx.storage.transactionSync(() => {
      const rows = sql.all<SlackMessageRef & { approval_id: string }>`SELECT m.approval_id, m.channel, m.ts FROM slack_messages m
        JOIN ${APPROVALS_CURRENT} a ON a.id = m.approval_id WHERE m.shown IS NULL AND a.status != 'pending'`;
      for (const r of rows) sql.run`UPDATE slack_messages SET shown = ${now} WHERE approval_id = ${r.approval_id}`;
      return rows;
    });
    if (!due.length) return;
    await ctx.storage.sync();
    const run = this.host.row();
    if (!run) return;
    const views = new Map(this.approvals.list().map((a) => [a.id, a]));
    for (const r of due) {
      const a = views.get(r.approval_id);
      if (!a) continue;
      const shown = decidedMessage(run.id, parse(run.trigger), a);
      try {
        await slackApi.call(this.host.env, "chat.update", {
          channel: r.channel,
          ts: r.ts,
          text: `${approvalFallback(shown)}: ${a.status}`,
          blocks: [...approvalBlocks(shown), decidedLine(a)],
        });
      } catch (err) {
        ctx.storage.transactionSync(() => this.host.event("approval_slack_failed", { approval_id: r.approval_id, kind: "update", error: slackError(err) }));
      }
    }
  }

  /**
   * A run a Slack trigger started answers in its thread: each answer (`run_succeeded`) once, claimed
   * (its `answer_slack_posted` event) before it is posted, so a crash in between loses it, never repeats it.
   */
  async postAnswer(): Promise<void> {
    const run = this.host.row();
    const thread = run?.status === "succeeded" ? slackThread(parse(run.trigger)) : null;
    if (!thread) return;
    const { sql, ctx } = this.host;
    const answers = sql.all<Pick<EventRow, "data">>`SELECT data FROM events WHERE type = 'run_succeeded' ORDER BY seq`;
    const n = answers.length;
    if (!n || sql.one`SELECT 1 AS posted FROM events WHERE type = 'answer_slack_posted' AND data ->> '$.message' = ${n}`) return;
    ctx.storage.transactionSync(() => this.host.event("answer_slack_posted", { message: n }));
    await ctx.storage.sync();
    const text = mrkdwnText(answerText(parse<{ output?: unknown }>(answers[n - 1]!.data).output)).slice(0, 39_000);
    try {
      await slackApi.call(this.host.env, "chat.postMessage", { channel: thread.channel, thread_ts: thread.thread_ts, text, unfurl_links: false });
    } catch (err) {
      ctx.storage.transactionSync(() => this.host.event("answer_slack_failed", { message: n, error: slackError(err) }));
    }
  }

  /** When the earliest Slack follow-up of a pending approval is due; null when none. */
  nextWakeUp(): number | null {
    if (!this.has()) return null;
    return (
      this.host.sql.one<{ at: number | null }>`SELECT min(min(coalesce(m.remind_at, 9e15), coalesce(m.escalate_at, 9e15))) AS at FROM slack_messages m
        JOIN ${APPROVALS_CURRENT} a ON a.id = m.approval_id WHERE a.status = 'pending' AND (m.remind_at IS NOT NULL OR m.escalate_at IS NOT NULL)`?.at ?? null
    );
  }

  private failed(approvalId: string, err: unknown): SlackOutcome {
    const error = slackError(err);
    this.host.ctx.storage.transactionSync(() => this.host.event("approval_slack_failed", { approval_id: approvalId, kind: "request", error }));
    return { posted: false, error };
  }
}

/** Slack's refusal as recorded: its code for an API error; a network failure says only that (never a token or URL). */
const slackError = (err: unknown) => (err instanceof SlackApiError ? err.message : "Slack could not be reached");
