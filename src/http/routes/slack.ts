import { Hono } from "hono/tiny";
import type { Context } from "hono";
import { refusalOf, type Decider } from "../../engine";
import { MAX_ANSWER_CHARS } from "../../api/bounds";
import { runStub, runView } from "../../runs";
import { initiatorOf } from "../../runs/initiator";
import { verifySlackAction, type SlackAction } from "../../slack/action-value";
import { slackApi } from "../../slack/api";
import { SlackOutsider, slackBy, slackDecider } from "../../slack/identity";
import { INPUT_ACTION, INPUT_BLOCK, modalMetadata, SLACK_VIEWS, slackInteraction } from "../../slack/interaction";
import { verifySlackSignature } from "../../slack/signature";
import { argumentsFromJson } from "../../views/argument-fields";
import { closedApproval } from "../../views/approval-page";
import { httpError } from "../http-error";
import { readLimited } from "../read-body";

/** The most a Slack request may be: an interaction with an edited call's arguments is tens of KiB. */
export const MAX_SLACK_BODY = 256 * 1024;
/** Slack's limit on a plain_text_input's value: a call whose arguments are longer is edited on the approval page. */
const MAX_MODAL_TEXT = 3000;

type C = Context<{ Bindings: Env }>;

/**
 * Every request Slack sends is refused unless its v0 signature verifies; every refusal is
 * logged with its reason and who it names (never a signature, a value or a token), so
 * forged, stale, replayed and wrong-user presses can be alerted on.
 */
export function slackRefused(reason: string, detail: Record<string, unknown> = {}): void {
  console.warn(`edgework: slack request refused: ${JSON.stringify({ reason, ...detail })}`);
}

export const refuse = (status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 502 | 503, reason: string, error: string, detail: Record<string, unknown> = {}) => {
  slackRefused(reason, detail);
  return httpError(status, { error });
};

/** The raw body, read up to MAX_SLACK_BODY, when Slack signed it (SLACK_SIGNING_SECRET) within its window. */
export async function signedSlackBody(c: C): Promise<Uint8Array> {
  const secret = c.env.SLACK_SIGNING_SECRET;
  if (!secret) throw refuse(503, "not_configured", "SLACK_SIGNING_SECRET is not set: every Slack request is refused until it is");
  let body: Uint8Array;
  try {
    body = await readLimited(c.req.raw, MAX_SLACK_BODY);
  } catch {
    throw refuse(413, "too_large", `the body is larger than ${MAX_SLACK_BODY} bytes`);
  }
  const check = await verifySlackSignature(secret, c.req.raw.headers, body);
  if (!check.ok) throw refuse(401, check.reason, "the Slack signature does not verify");
  return body;
}

/**
 * `POST /slack/interactions`: a button on an approval message (Approve, Reject, Edit, Answer)
 * and the modals Edit and Answer open. The approval is the one the button's signed value names;
 * the decision goes through the run's one decide path (single use: a second press is a 409 and
 * changes nothing), as the Slack user, mapped to their confirmed email for the policy.
 */
export const slack = new Hono<{ Bindings: Env }>();

slack.post("/interactions", async (c) => {
  const body = await signedSlackBody(c);
  let raw: unknown;
  try {
    raw = JSON.parse(new URLSearchParams(new TextDecoder().decode(body)).get("payload") ?? "");
  } catch {
    throw refuse(400, "bad_payload", "the payload is not JSON");
  }
  const parsed = slackInteraction.safeParse(raw);
  if (!parsed.success) throw refuse(400, "unknown_payload", "not an interaction edgework sent (unknown type, action or view)");
  const p = parsed.data;
  const user = p.user.id;
  if (p.type === "block_actions") {
    const action = p.actions[0]!;
    const target = await checkedAction(c, action.value, user);
    const message = { channel: p.container.channel_id, ts: p.container.message_ts };
    const decider = await identify(c, user);
    if (action.action_id === "approve" || action.action_id === "reject")
      return decided(c, target, message, decider, { decision: action.action_id }, () => c.body(null, 200));
    return openModal(c, target, decider, action.action_id, action.value, message, p.trigger_id);
  }
  const meta = modalMetadata.safeParse(safeJson(p.view.private_metadata));
  if (!meta.success) throw refuse(400, "bad_metadata", "the modal's metadata is not edgework's", { user });
  const target = await checkedAction(c, meta.data.value, user);
  const decider = await identify(c, user);
  const text = p.view.state.values[INPUT_BLOCK]![INPUT_ACTION]!.value ?? "";
  const formErrors = (error: string) => c.json({ response_action: "errors", errors: { [INPUT_BLOCK]: error.slice(0, 300) } });
  let asked: { decision: "approve"; arguments?: unknown; answer?: string };
  if (p.view.callback_id === SLACK_VIEWS.answer) {
    const answer = text.trim();
    if (!answer || answer.length > MAX_ANSWER_CHARS) return formErrors(`Write an answer of 1 to ${MAX_ANSWER_CHARS} characters.`);
    asked = { decision: "approve", answer };
  } else {
    const read = argumentsFromJson(text);
    if ("problem" in read) return formErrors(read.problem);
    asked = { decision: "approve", arguments: read.args };
  }
  return decided(c, target, meta.data, decider, asked, () => c.body(null, 200), formErrors);
});

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** The run and approval a button's value names, when its MAC verifies. */
async function checkedAction(c: C, value: string, user: string): Promise<SlackAction> {
  if (!c.env.APPROVAL_SECRET) throw refuse(503, "not_configured", "APPROVAL_SECRET is not set: no Slack button can be checked");
  const target = await verifySlackAction(value, c.env.APPROVAL_SECRET);
  if (!target) throw refuse(403, "bad_value", "the button's value was not made by this deployment", { user });
  return target;
}

async function identify(c: C, user: string): Promise<Decider> {
  try {
    return await slackDecider(c.env, user);
  } catch (err) {
    if (err instanceof SlackOutsider) throw refuse(403, "outsider", `Slack user ${user} is ${err.message}: they may not decide`, { user, why: err.message });
    throw refuse(502, "users_info_failed", "Slack did not say who pressed the button", { user, error: (err as Error).message });
  }
}

/**
 * Decides through the run (the same path as the page and the API: its policy, single use,
 * expiry); the run then updates the message to show who decided (run/slack.ts, as for a
 * decision by any way). A refusal is logged and answered with the run's status (`refused`:
 * a modal shows it in its form instead).
 */
async function decided(
  c: C,
  target: SlackAction,
  message: { channel: string; ts: string },
  decider: Decider,
  asked: { decision: "approve" | "reject"; arguments?: unknown; answer?: string },
  ok: () => Response,
  refused?: (error: string) => Response,
): Promise<Response> {
  const result = await runStub(c.env, target.run).decide(target.approval, { ...asked, by: slackBy(decider), decider, slackMessage: message });
  if (!result.ok) {
    slackRefused("decision_refused", { status: result.status, user: decider.slack, run: target.run, approval: target.approval });
    if (refused) return refused(result.error);
    throw httpError(result.status as 400, { error: result.error });
  }
  return ok();
}

/** Edit or Answer: a modal (views.open with the press's trigger_id), once the presser may decide and the approval is open. */
async function openModal(
  c: C,
  target: SlackAction,
  decider: Decider,
  action: "edit" | "answer",
  value: string,
  message: { channel: string; ts: string },
  triggerId: string | undefined,
): Promise<Response> {
  const detail = { user: decider.slack, run: target.run, approval: target.approval };
  const run = await runView(c.env, target.run);
  const a = run?.approvals.find((x) => x.id === target.approval);
  if (!run || !a) throw refuse(409, "unknown_approval", "the run or approval this button names does not exist (any more)", detail);
  const closed = closedApproval(run, a);
  if (closed) throw refuse(closed.status, "closed", closed.message, detail);
  const policy = a.deciders ? { ...(a.deciders.ask ? { ask: a.deciders.ask } : {}), allowInitiator: a.deciders.allow_initiator } : undefined;
  const refusal = refusalOf(policy, decider, initiatorOf(run.trigger));
  if (refusal) throw refuse(403, `not_allowed:${refusal.code}`, refusal.reason, detail);
  if ((action === "answer") !== (a.kind === "question")) throw refuse(400, "wrong_action", `${action} does not apply to this ${a.kind}`, detail);
  if (action === "edit" && !a.editable) throw refuse(400, "not_editable", "this call's policy allows no edit", detail);
  const initial = action === "edit" ? JSON.stringify(a.args, null, 2) : "";
  if (initial.length > MAX_MODAL_TEXT) throw refuse(400, "too_long", "these arguments are too long to edit in Slack: edit them on the approval page", detail);
  if (!triggerId) throw refuse(400, "no_trigger", "the press carries no trigger_id to open a modal with", detail);
  try {
    await slackApi.call(c.env, "views.open", {
      trigger_id: triggerId,
      view: {
        type: "modal",
        callback_id: action === "edit" ? SLACK_VIEWS.edit : SLACK_VIEWS.answer,
        private_metadata: JSON.stringify({ value, ...message }),
        title: { type: "plain_text", text: action === "edit" ? "Edit, then approve" : "Answer" },
        submit: { type: "plain_text", text: action === "edit" ? "Approve edited" : "Send answer" },
        blocks: [
          {
            type: "input",
            block_id: INPUT_BLOCK,
            label: { type: "plain_text", text: action === "edit" ? "Arguments (JSON)" : "Your answer" },
            element: {
              type: "plain_text_input",
              action_id: INPUT_ACTION,
              multiline: true,
              max_length: MAX_MODAL_TEXT,
              ...(initial ? { initial_value: initial } : {}),
            },
          },
        ],
      },
    });
  } catch (err) {
    throw refuse(502, "views_open_failed", "Slack did not open the modal", { ...detail, error: (err as Error).message });
  }
  return c.body(null, 200);
}
