import type { Decider } from "../engine";
import { describeApproval } from "../http/describe-approval";
import type { ApprovalView } from "../runs/types";
import { describedCall, type DescribedCall } from "../views/described-call";
import { describeTrigger, isoTime } from "../views/format";

/** The approval message's buttons, by `action_id`: the one grammar the message and the route share. */
export const SLACK_ACTIONS = ["approve", "reject", "edit", "answer"] as const;
export type SlackActionId = (typeof SLACK_ACTIONS)[number];

/** Slack's limit on a section's text is 3,000 characters; the body leaves room for its fence. */
const MAX_BODY = 2800;

/**
 * Text from a model, a tool's arguments or a trigger, made inert in mrkdwn: `&`, `<`, `>`
 * escaped as Slack asks (so no `<!channel>`, `<@U…>` or link markup comes through), and a
 * fence inside a code block broken so the block cannot be closed early.
 */
export const mrkdwnText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fenced = (text: string) => `\`\`\`${mrkdwnText(text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}\n…` : text).replace(/```/g, "`\u200b``")}\`\`\``;
const inlineCode = (text: string) => `\`${mrkdwnText(text.slice(0, 300)).replace(/`/g, "'")}\``;

export interface SlackApprovalInput {
  runId: string;
  workerChain: string[];
  tool: string;
  /** The question's text, for a question (answered with the Answer button). */
  question?: string;
  call: DescribedCall;
  trigger: unknown;
  expiresAt: number;
  /** The editable call gets an Edit button (the arguments in a modal). */
  editable: boolean;
  /** The signed value every button carries (action-value.ts). */
  value: string;
}

type Block = Record<string, unknown>;
const section = (text: string): Block => ({ type: "section", text: { type: "mrkdwn", text } });
const button = (action_id: SlackActionId, label: string, value: string, style?: "primary" | "danger"): Block => ({
  type: "button",
  action_id,
  text: { type: "plain_text", text: label },
  value,
  ...(style ? { style } : {}),
});

export const approvalFallback = (m: Pick<SlackApprovalInput, "workerChain" | "tool" | "question">) =>
  m.question ? `Question from ${m.workerChain.join(" → ")}` : `Approval needed: ${m.workerChain.join(" → ")} wants to call ${m.tool}`;

/** What the message says, without its buttons (the decided message keeps it). */
export function approvalBlocks(m: Omit<SlackApprovalInput, "value">): Block[] {
  const who = mrkdwnText(m.workerChain.join(" → "));
  return [
    m.question ? section(`*${who}* asks:\n${fenced(m.question)}`) : section(`*${who}* wants to call ${inlineCode(m.tool)}`),
    ...(m.question ? [] : [...(m.call.summary ? [section(inlineCode(m.call.summary))] : []), section(fenced(m.call.body))]),
    {
      type: "context",
      elements: [
        { type: "mrkdwn", text: `Run ${inlineCode(m.runId)}, started by ${mrkdwnText(describeTrigger(m.trigger))}. Expires ${isoTime(m.expiresAt)}.` },
      ],
    },
  ];
}

/** The chat.postMessage body of an approval or a question: what it is about, and its buttons. */
export function approvalMessage(channel: string, m: SlackApprovalInput): Record<string, unknown> {
  const buttons = m.question
    ? [button("answer", "Answer", m.value, "primary")]
    : [
        button("approve", "Approve", m.value, "primary"),
        button("reject", "Reject", m.value, "danger"),
        ...(m.editable ? [button("edit", "Edit", m.value)] : []),
      ];
  return {
    channel,
    text: approvalFallback(m),
    blocks: [...approvalBlocks(m), { type: "actions", block_id: "edgework_approval", elements: buttons }],
    unfurl_links: false,
    unfurl_media: false,
  };
}

/** What a decided message shows of its approval (the call as asked), without buttons. */
export const decidedMessage = (runId: string, trigger: unknown, a: ApprovalView): Omit<SlackApprovalInput, "value"> => ({
  runId,
  workerChain: a.worker_chain,
  tool: a.tool,
  ...(a.kind === "question" ? { question: a.description } : {}),
  call: describedCall(describeApproval(a), a.args),
  trigger,
  expiresAt: a.expires_at,
  editable: false,
});

const OUTCOME: Record<string, string> = { approved: "Approved", rejected: "Rejected", responded: "Answered in place of the call" };

/**
 * The line a decided message ends with: how it went and who decided, whatever the way
 * (a Slack user by mention, anyone else by their address and way), or that it expired or is void.
 */
export function decidedLine(a: Pick<ApprovalView, "status" | "kind" | "edited_args"> & { by: Decider | null; decided_by: string | null }): Block {
  const text =
    a.status === "expired"
      ? "*Expired*: nobody decided in time; it counted as a rejection."
      : a.status === "voided"
        ? "*Void*: the run ended before anyone decided."
        : `*${a.kind === "question" ? "Answered" : a.edited_args != null ? "Approved with edited arguments" : (OUTCOME[a.status] ?? a.status)}* by ${decidedBy(a)}.`;
  return { type: "context", elements: [{ type: "mrkdwn", text }] };
}

const decidedBy = (a: { by: Decider | null; decided_by: string | null }) => {
  const d = a.by;
  if (d?.via === "slack" && d.slack) return `<@${d.slack}>${d.email ? ` (${mrkdwnText(d.email)})` : ""} in Slack`;
  if (d?.email) return `${mrkdwnText(d.email)} (${d.via})`;
  return mrkdwnText(a.decided_by ?? d?.via ?? "the API");
};

/** A follow-up in the message's thread: the approval still waits. */
export const followUpText = (kind: "reminder" | "escalation", escalateTo: string[]) =>
  kind === "reminder"
    ? "Reminder: this approval is still waiting for a decision."
    : `Escalated: nobody has decided this approval yet${escalateTo.length ? `; also asked by email: ${mrkdwnText(escalateTo.join(", "))}` : ""}. Whoever decides first wins.`;
