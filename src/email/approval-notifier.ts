import type { PendingApproval } from "../engine";
import { signApprovalToken } from "../tokens/approval-token";
import { approvalHtml, approvalSubject, approvalText } from "../views/approval-email";
import { mailer } from "./mailer";
import { buildMime } from "./mime";

export type EmailOutcome = { emailed: true; to: string } | { emailed: false; missing: string[] };

/** What approval emails need that is not configured, by variable name. */
export function missingEmailConfig(env: Env, notify: string | undefined): string[] {
  const missing: string[] = [];
  if (!env.APPROVAL_EMAIL) missing.push("the APPROVAL_EMAIL send_email binding");
  if (!env.APPROVAL_FROM) missing.push("APPROVAL_FROM");
  if (!env.APPROVAL_SECRET) missing.push("APPROVAL_SECRET");
  if (!env.PUBLIC_URL) missing.push("PUBLIC_URL");
  if (!notify && !env.APPROVER_EMAIL) missing.push("a recipient (approval.notify in the worker file, or APPROVER_EMAIL)");
  return missing;
}

/** The link an approver follows: signed, bound to this approval, expiring with it. */
export async function approvalLink(env: Env, runId: string, approvalId: string, expiresAt: number): Promise<string> {
  const token = await signApprovalToken({ run: runId, approval: approvalId, exp: expiresAt }, env.APPROVAL_SECRET!);
  return `${env.PUBLIC_URL!.replace(/\/+$/, "")}/approvals/${token}`;
}

/** Sends one approval email; throws if the send fails (the caller retries later). */
export async function sendApprovalEmail(env: Env, p: PendingApproval, run: { id: string; trigger: unknown }, expiresAt: number): Promise<EmailOutcome> {
  const missing = missingEmailConfig(env, p.notify);
  if (missing.length) return { emailed: false, missing };
  const to = p.notify ?? env.APPROVER_EMAIL!;
  const content = { runId: run.id, workerChain: p.workerChain, tool: p.tool, args: p.args, trigger: run.trigger, expiresAt, link: await approvalLink(env, run.id, p.id, expiresAt) };
  const raw = buildMime({ from: env.APPROVAL_FROM!, to, subject: approvalSubject(content), text: approvalText(content), html: await approvalHtml(content) });
  await mailer.send(env.APPROVAL_EMAIL, { from: env.APPROVAL_FROM!, to, raw });
  return { emailed: true, to };
}
