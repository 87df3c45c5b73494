import { emailableDeciders, type PendingApproval } from "../engine";
import { signApprovalToken } from "../tokens/approval-token";
import { replyReference } from "../tokens/reply-reference";
import { approvalHtml, approvalSubject, approvalText, type ApprovalEmailInput } from "../views/approval-email";
import { questionHtml, questionSubject, questionText } from "../views/question-email";
import { mailer } from "./mailer";
import { buildMime } from "./mime";
import { appPath } from "../http/base-path";
import { describeApproval } from "../http/describe-approval";
import { describedCall } from "../views/described-call";

export type EmailOutcome = { emailed: true; to: string } | { emailed: false; missing: string[] };

/** What an approval email is about; a pending approval, or the stored row of one. */
export type ApprovalSubject = Pick<PendingApproval, "id" | "workerChain" | "tool" | "args" | "notify" | "kind" | "description" | "inputSchema">;

/**
 * Whom an approval is first emailed to, one link each: a question's `to` alone (it is
 * meant for that person), else the addresses its policy names (`ask:`; patterns and
 * `api` name no one to write to), else `notify`, else APPROVER_EMAIL.
 */
export function approvalRecipients(env: Env, p: Pick<PendingApproval, "notify" | "deciders" | "kind" | "args">): string[] {
  const addressee = p.kind === "question" ? (p.args as { to?: unknown } | null)?.to : undefined;
  if (typeof addressee === "string") return [addressee];
  const named = emailableDeciders(p.deciders);
  if (named.length) return named;
  const to = p.notify ?? env.APPROVER_EMAIL;
  return to ? [to] : [];
}

/** The run an approval belongs to; `objectId`: its Durable Object's id, for the reply address. */
export interface ApprovalRun {
  id: string;
  trigger: unknown;
  objectId?: string;
}

/** A reminder (same approver) or an escalation (someone else): sent by the run's alarm. */
export interface FollowUpMail {
  kind: "reminder" | "escalation";
  originallyTo: string | null;
}

/** What approval emails need that is not configured, by variable name. */
export function missingEmailConfig(env: Env, recipient: string | undefined): string[] {
  const missing: string[] = [];
  if (!env.APPROVAL_EMAIL) missing.push("the APPROVAL_EMAIL send_email binding");
  if (!env.APPROVAL_FROM) missing.push("APPROVAL_FROM");
  if (!env.APPROVAL_SECRET) missing.push("APPROVAL_SECRET");
  if (!env.PUBLIC_URL) missing.push("PUBLIC_URL");
  if (!recipient) missing.push("a recipient (approval.notify in the worker file, or APPROVER_EMAIL)");
  return missing;
}

/** The link an approver follows: signed, bound to this approval and recipient, expiring with it. */
export async function approvalLink(env: Env, runId: string, approvalId: string, expiresAt: number, to?: string): Promise<string> {
  const token = await signApprovalToken({ run: runId, approval: approvalId, exp: expiresAt, to }, env.APPROVAL_SECRET!);
  return `${env.PUBLIC_URL!.replace(/\/+$/, "")}${appPath(`/approvals/${token}`)}`;
}

/** `<ref>@APPROVAL_REPLY_DOMAIN`, or undefined when replies are off (or the run has no object id). */
async function replyAddress(env: Env, run: ApprovalRun, approvalId: string): Promise<string | undefined> {
  if (!env.APPROVAL_REPLY_DOMAIN || !run.objectId) return undefined;
  const ref = await replyReference(run.objectId, approvalId, env.APPROVAL_SECRET!);
  return ref ? `${ref}@${env.APPROVAL_REPLY_DOMAIN}` : undefined;
}

/**
 * Sends one approval email to `to` (with a link bound to them): the request, or a follow-up.
 * Throws if the send fails, as the binding does (send-failure.ts tells whether to try again).
 */
export async function sendApprovalEmail(
  env: Env,
  p: ApprovalSubject,
  run: ApprovalRun,
  expiresAt: number,
  to: string | undefined,
  followUp?: FollowUpMail,
): Promise<EmailOutcome> {
  const missing = missingEmailConfig(env, to);
  if (missing.length || !to) return { emailed: false, missing };
  const replyTo = await replyAddress(env, run, p.id);
  const content: ApprovalEmailInput = {
    runId: run.id,
    workerChain: p.workerChain,
    tool: p.tool,
    args: p.args,
    call: describedCall(describeApproval({ worker_chain: p.workerChain, tool: p.tool, args: p.args }), p.args),
    trigger: run.trigger,
    expiresAt,
    link: await approvalLink(env, run.id, p.id, expiresAt, to),
    editable: p.inputSchema !== undefined,
    replyTo,
    followUp: followUp && { kind: followUp.kind, originallyTo: followUp.originallyTo },
  };
  const question = p.kind === "question" ? { ...content, question: p.description } : null;
  const raw = buildMime({
    from: env.APPROVAL_FROM!,
    to,
    replyTo,
    subject: question ? questionSubject(question) : approvalSubject(content),
    text: question ? questionText(question) : approvalText(content),
    html: question ? await questionHtml(question) : await approvalHtml(content),
  });
  await mailer.send(env, { from: env.APPROVAL_FROM!, to, raw });
  return { emailed: true, to };
}
