import type { Context } from "hono";
import { refusalOf, type Decider } from "../engine";
import { initiatorOf } from "../runs/initiator";
import type { ApprovalView, RunView } from "../runs/types";
import { runView } from "../runs";
import { verifyApprovalToken, type ApprovalTokenPayload } from "../tokens/approval-token";
import { appPath } from "./base-path";

export type LinkCheck =
  | { ok: true; payload: ApprovalTokenPayload; run: RunView; approval: ApprovalView }
  | { ok: false; status: 403 | 404 | 410 | 503; title: string; message: string };

/** Verifies an approval link and loads what it points at. Never changes anything. */
export async function checkApprovalLink(c: Context<{ Bindings: Env }>, token: string): Promise<LinkCheck> {
  const secret = c.env.APPROVAL_SECRET;
  if (!secret)
    return {
      ok: false,
      status: 503,
      title: "Approval links are off",
      message: "APPROVAL_SECRET is not set on this deployment, so no link can be checked. Decide through the API instead.",
    };
  const check = await verifyApprovalToken(token, secret);
  if (!check.ok && check.status === 403)
    return {
      ok: false,
      status: 403,
      title: "This link is not valid",
      message: "The link was changed or was not made by this deployment. Use the link from the email as it was sent.",
    };
  if (!check.ok) return { ok: false, status: 410, title: "This link has expired", message: "The approval expired; it counts as a rejection." };
  const run = await runView(c.env, check.payload.run);
  const approval = run?.approvals.find((a) => a.id === check.payload.approval);
  if (!run || !approval)
    return { ok: false, status: 404, title: "Nothing to decide here", message: "The run or approval this link names does not exist (any more)." };
  return { ok: true, payload: check.payload, run, approval };
}

/** The run page as reached from an approval link: the same token grants viewing its run. */
export const runPageLink = (runId: string, token: string) => appPath(`/runs/${encodeURIComponent(runId)}/view?token=${encodeURIComponent(token)}`);

/**
 * Why the person a link names may not decide its approval (the same check the run
 * makes when they POST), or null: the page says so before anyone writes a note.
 */
export function linkRefusal(run: RunView, approval: ApprovalView, payload: ApprovalTokenPayload): string | null {
  const d = approval.deciders;
  const policy = d ? { ...(d.ask ? { ask: d.ask } : {}), allowInitiator: d.allow_initiator } : undefined;
  return refusalOf(policy, linkDecider(payload, approval).decider, initiatorOf(run.trigger))?.reason ?? null;
}

/**
 * Who decides through a link, as its signature says: the recipient it was emailed to
 * (a forwarded link still names them), the inbox session it was signed for, or the
 * person Cloudflare Access named. Links from before recipients were signed in fall
 * back to the approval's `notify`.
 */
export function linkDecider(payload: ApprovalTokenPayload, approval: ApprovalView): { decider: Decider; by: string } {
  if (payload.via === "inbox") return { decider: { email: null, via: "inbox" }, by: "inbox (signed in with the API token)" };
  if (payload.via === "access") return { decider: { email: payload.to ?? "", via: "access" }, by: `inbox (${payload.to}, Cloudflare Access)` };
  const to = payload.to ?? approval.notify;
  return { decider: { email: to ?? null, via: "link" }, by: `approval link${to ? ` (${to})` : ""}` };
}
