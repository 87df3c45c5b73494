import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import type { RunView } from "../../src/runs/types";
import { signSlackAction } from "../../src/slack/action-value";
import { slackSignature } from "../../src/slack/signature";
import { signApprovalToken } from "../../src/tokens/approval-token";
import { effectBodies, effectCount, effectUrl, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, parseMail } from "../email/support";

const SIGNING = "test-slack-signing-secret";
const HOUR = 3_600_000;
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const auth = { Authorization: "Bearer test-token" };

type SlackCall = { method: string; body: Record<string, any>; authorized: boolean; answer: { channel: string; ts: string } };
const slackCalls = async (): Promise<SlackCall[]> => (await (await fetch(`${env.SLACK_API_BASE!.replace(/\/api$/, "")}/calls`)).json()) as SlackCall[];
/** The calls about one run (its id is in every message edgework posts or updates). */
const callsFor = async (runId: string, method?: string) =>
  (await slackCalls()).filter((c) => JSON.stringify(c.body).includes(runId) && (!method || c.method === method));

/** A form-encoded interaction as Slack posts it, signed (or not) as a test says. */
async function interaction(payload: unknown, opts: { ts?: number; secret?: string; signature?: string } = {}) {
  const body = `payload=${encodeURIComponent(typeof payload === "string" ? payload : JSON.stringify(payload))}`;
  const ts = opts.ts ?? Math.floor(Date.now() / 1000);
  const signature = opts.signature ?? (await slackSignature(opts.secret ?? SIGNING, ts, body));
  return call("/slack/interactions", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": signature },
    body,
  });
}

/** A press of `action` on the message `posted`, by `user`, carrying the button value the message holds (or another). */
const press = (posted: SlackCall, user: string, action: string, value?: string) => ({
  type: "block_actions",
  user: { id: user },
  trigger_id: "1337.42.abcd",
  container: { type: "message", channel_id: posted.answer.channel, message_ts: posted.answer.ts },
  actions: [{ action_id: action, block_id: "edgework_approval", value: value ?? buttonValue(posted) }],
});
const buttonValue = (posted: SlackCall) => (posted.body.blocks as any[]).find((b) => b.type === "actions").elements[0].value as string;

let sent: OutgoingMail[] = [];
let warned: string[] = [];
beforeEach(() => {
  sent = captureMail();
  warned = [];
  vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warned.push(args.map(String).join(" ")));
});
afterEach(() => vi.restoreAllMocks());

/** A run of slack-writer paused at its POST of "as asked"; its id, approval, and the one Slack message posted for it. */
async function pausedRun(id: string) {
  await script("slack-writer", [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: '{"title":"as asked"}' } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker: "slack-writer", input: { input: "post it" }, approvalMode: "ask", budget: {}, trigger: { kind: "api" } });
  const view = await settle(id);
  expect(view.status).toBe("awaiting_approval");
  const posts = await callsFor(id, "chat.postMessage");
  expect(posts).toHaveLength(1);
  return { approval: view.approvals[0]!, posted: posts[0]! };
}

const state = async (id: string) => {
  const view = (await stub(id).status())!;
  return { status: view.status, approval: view.approvals[0]!.status, effects: await effectCount(id) };
};

describe("an approval in Slack", () => {
  it("posts one Block Kit message (the described call, Approve / Reject / Edit) with the bot token; a replay posts nothing again", async () => {
    const { posted } = await pausedRun("slack-post");
    expect(posted.authorized).toBe(true);
    expect(posted.body.channel).toBe("#ops");
    const actions = (posted.body.blocks as any[]).find((b) => b.type === "actions");
    expect(actions.elements.map((e: any) => [e.action_id, e.text.text])).toEqual([
      ["approve", "Approve"],
      ["reject", "Reject"],
      ["edit", "Edit"],
    ]);
    const text = JSON.stringify(posted.body.blocks);
    expect(text).toContain(`POST ${env.FAKE_OPENAI_HOST}/effects/slack-post`);
    // Recorded with the request step and as an event: where the message is.
    const events = (await stub("slack-post").eventsSince())!.events;
    expect(events.find((e) => e.type === "approval_slack_posted")?.data).toMatchObject({ channel: "COPS000000", ts: expect.stringMatching(/^1700000000\./) });
    // Another activation (a replay of the pause) posts nothing.
    await stub("slack-post").wake();
    await settle("slack-post");
    expect(await callsFor("slack-post", "chat.postMessage")).toHaveLength(1);
  });

  it("a correctly signed Approve decides once, as the Slack user (via slack, their confirmed email); the message then shows who decided", async () => {
    const { posted } = await pausedRun("slack-approve");
    const res = await interaction(press(posted, "U0LEAD0001", "approve"));
    expect(res.status).toBe(200);
    const done = await settle("slack-approve");
    expect(done.status).toBe("succeeded");
    expect(await effectCount("slack-approve")).toBe(1);
    expect(done.approvals[0]).toMatchObject({
      status: "approved",
      decided_by: "slack (lead@example.com)",
      by: { email: "lead@example.com", via: "slack", slack: "U0LEAD0001" },
    });
    // The audit record the API shows.
    const view = (await (await call("/runs/slack-approve", { headers: auth })).json()) as RunView;
    expect(view.approvals[0]!.by).toEqual({ email: "lead@example.com", via: "slack", slack: "U0LEAD0001" });
    const updates = await callsFor("slack-approve", "chat.update");
    expect(updates).toHaveLength(1);
    expect(updates[0]!.body).toMatchObject({ channel: "COPS000000", ts: posted.answer.ts });
    const shown = JSON.stringify(updates[0]!.body.blocks);
    expect(shown).toContain("*Approved* by <@U0LEAD0001> (lead@example.com)");
    expect(shown).not.toContain('"actions"');

    // The same press again (a replay inside the window): 409, nothing changes, logged.
    const again = await interaction(press(posted, "U0LEAD0001", "approve"));
    expect(again.status).toBe(409);
    expect(await effectCount("slack-approve")).toBe(1);
    expect(await callsFor("slack-approve", "chat.update")).toHaveLength(1);
    expect(warned.some((w) => w.includes('"reason":"decision_refused"') && w.includes('"status":409'))).toBe(true);
  });

  it("a decision by another way (the emailed link) is shown on the message too, once; the buttons then decide nothing", async () => {
    const { posted, approval } = await pausedRun("slack-api");
    const token = await signApprovalToken(
      { run: "slack-api", approval: approval.id, exp: approval.expires_at, to: "lead@example.com" },
      "test-approval-secret",
    );
    const res = await call(`/approvals/${token}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "decision=reject",
    });
    expect(res.status).toBe(200);
    await settle("slack-api");
    const updates = await callsFor("slack-api", "chat.update");
    expect(updates).toHaveLength(1);
    expect(updates[0]!.body).toMatchObject({ channel: posted.answer.channel, ts: posted.answer.ts });
    expect(JSON.stringify(updates[0]!.body.blocks)).toContain("*Rejected* by lead@example.com (link).");
    expect((await interaction(press(posted, "U0LEAD0001", "approve"))).status).toBe(409);
    await stub("slack-api").wake();
    await settle("slack-api");
    expect(await callsFor("slack-api", "chat.update")).toHaveLength(1);
  });

  it("a policy's slack:<user id> entry names a Slack user; Reject records the rejection", async () => {
    const { posted } = await pausedRun("slack-reject");
    expect((await interaction(press(posted, "U0ALICE001", "reject"))).status).toBe(200);
    const done = await settle("slack-reject");
    expect(done.approvals[0]).toMatchObject({ status: "rejected", by: { via: "slack", slack: "U0ALICE001" } });
    expect(await effectCount("slack-reject")).toBe(0);
    expect(JSON.stringify((await callsFor("slack-reject", "chat.update"))[0]!.body.blocks)).toContain("*Rejected* by <@U0ALICE001>");
  });

  it("forged, stale, unsigned, wrong-user and unconfirmed-email presses decide nothing, and each is logged without secrets", async () => {
    const { posted } = await pausedRun("slack-refused");
    const before = await state("slack-refused");
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ["forged (another secret)", interaction(press(posted, "U0LEAD0001", "approve"), { secret: "not-the-secret" }), 401, "bad_signature"],
      ["stale (6 minutes old)", interaction(press(posted, "U0LEAD0001", "approve"), { ts: now - 6 * 60 }), 401, "stale"],
      ["from the future", interaction(press(posted, "U0LEAD0001", "approve"), { ts: now + 6 * 60 }), 401, "stale"],
      ["unsigned", interaction(press(posted, "U0LEAD0001", "approve"), { signature: "" }), 401, "no_signature"],
      ["a stranger", interaction(press(posted, "U0EVE00001", "approve")), 403, "decision_refused"],
      ["the lead's address, unconfirmed", interaction(press(posted, "U0UNCONF01", "approve")), 403, "decision_refused"],
      ["no email at all", interaction(press(posted, "U0NOMAIL01", "approve")), 403, "decision_refused"],
      ["unknown to Slack", interaction(press(posted, "U0GHOST001", "approve")), 502, "users_info_failed"],
      // Review 5: a guest or another workspace's user in a shared channel, with the lead's confirmed address.
      ["a guest of the workspace", interaction(press(posted, "U0GUEST001", "approve")), 403, "outsider"],
      ["another workspace's user", interaction(press(posted, "U0STRNG001", "approve")), 403, "outsider"],
    ];
    for (const [name, res, status, reason] of cases) {
      expect((await res).status, name).toBe(status);
      expect(
        warned.some((w) => w.includes(`"reason":"${reason}"`)),
        name,
      ).toBe(true);
    }
    expect(await state("slack-refused")).toEqual(before);
    expect(await callsFor("slack-refused", "chat.update")).toEqual([]);
    for (const w of warned) {
      expect(w).not.toContain(SIGNING);
      expect(w).not.toContain(buttonValue(posted));
      expect(w).not.toContain("xoxb-");
    }
  });

  it("hostile bodies: oversized, bad JSON, unknown types and action ids, a forged value, and a genuine value of another run decide nothing", async () => {
    const { posted, approval } = await pausedRun("slack-hostile");
    const other = await pausedRun("slack-other");
    const before = await state("slack-hostile");
    const huge = `payload=${"a".repeat(300 * 1024)}`;
    const ts = Math.floor(Date.now() / 1000);
    const oversized = await call("/slack/interactions", {
      method: "POST",
      headers: { "x-slack-request-timestamp": String(ts), "x-slack-signature": await slackSignature(SIGNING, ts, huge) },
      body: huge,
    });
    expect(oversized.status).toBe(413);
    expect((await interaction("{not json")).status).toBe(400);
    expect((await interaction({ type: "shortcut", user: { id: "U0LEAD0001" } })).status).toBe(400);
    expect((await interaction(press(posted, "U0LEAD0001", "delete_everything"))).status).toBe(400);
    expect((await interaction(press(posted, "<!channel>", "approve"))).status).toBe(400);
    // A value signed with another secret, and an approval link's token (the same secret, another purpose): neither is a button value.
    const forged = await signSlackAction({ run: "slack-hostile", approval: approval.id, exp: approval.expires_at }, "guessed");
    expect((await interaction(press(posted, "U0LEAD0001", "approve", forged))).status).toBe(403);
    const link = await signApprovalToken({ run: "slack-hostile", approval: approval.id, exp: approval.expires_at }, "test-approval-secret");
    expect((await interaction(press(posted, "U0LEAD0001", "approve", link))).status).toBe(403);
    // The other run's genuine button value, pressed on this run's message: it is bound to its own message, so it decides nothing.
    expect((await interaction(press(posted, "U0LEAD0001", "approve", buttonValue(other.posted)))).status).toBe(403);
    expect((await stub("slack-other").status())!.approvals[0]!.status).toBe("pending");
    // This run's value from another message (a copy in another channel) neither.
    const elsewhere = { ...posted, answer: { channel: "C0ELSEWHER", ts: posted.answer.ts } };
    expect((await interaction(press(elsewhere, "U0LEAD0001", "approve"))).status).toBe(403);
    expect(await state("slack-hostile")).toEqual(before);
    expect(await callsFor("slack-hostile", "chat.update")).toEqual([]);
    for (const reason of ["too_large", "bad_payload", "unknown_payload", "bad_value"])
      expect(
        warned.some((w) => w.includes(`"reason":"${reason}"`)),
        reason,
      ).toBe(true);
  });

  it("Edit opens a modal with the arguments; its submission runs the edited call, checked as the API checks an edit", async () => {
    const { posted, approval } = await pausedRun("slack-edit");
    expect((await interaction(press(posted, "U0LEAD0001", "edit"))).status).toBe(200);
    const opened = (await slackCalls()).filter((c) => c.method === "views.open" && c.body.view.private_metadata.includes(buttonValue(posted)));
    expect(opened).toHaveLength(1);
    const view = opened[0]!.body.view;
    expect(opened[0]!.body.trigger_id).toBe("1337.42.abcd");
    expect(JSON.parse(view.blocks[0].element.initial_value)).toEqual(approval.args);
    const submit = (text: string, user = "U0LEAD0001") =>
      interaction({
        type: "view_submission",
        user: { id: user },
        view: {
          callback_id: view.callback_id,
          private_metadata: view.private_metadata,
          state: { values: { edgework_input: { value: { type: "plain_text_input", value: text } } } },
        },
      });
    // Not JSON, and a schema break: the modal shows why, nothing is decided.
    expect(await (await submit("{oops")).json()).toMatchObject({
      response_action: "errors",
      errors: { edgework_input: expect.stringMatching(/not valid JSON/) },
    });
    const broken = await (await submit(JSON.stringify({ ...(approval.args as object), method: 42 }))).json();
    expect(broken).toMatchObject({ response_action: "errors" });
    // A stranger's submission of the same modal.
    expect(await (await submit(JSON.stringify(approval.args), "U0EVE00001")).json()).toMatchObject({ response_action: "errors" });
    expect((await stub("slack-edit").status())!.approvals[0]!.status).toBe("pending");

    const edited = { ...(approval.args as object), body: '{"title":"as edited"}' };
    const ok = await submit(JSON.stringify(edited));
    expect(ok.status).toBe(200);
    const done = await settle("slack-edit");
    expect(done.status).toBe("succeeded");
    expect(await effectBodies("slack-edit")).toEqual(['{"title":"as edited"}']);
    expect(done.approvals[0]).toMatchObject({ status: "approved", edited_args: edited, by: { via: "slack", email: "lead@example.com" } });
    expect(JSON.stringify((await callsFor("slack-edit", "chat.update"))[0]!.body.blocks)).toContain("Approved with edited arguments");
    // Submitting again: already decided.
    expect(await (await submit(JSON.stringify(edited))).json()).toMatchObject({
      response_action: "errors",
      errors: { edgework_input: expect.stringMatching(/already approved/) },
    });
  });

  it("reminders and escalation post in the message's thread, once each", async () => {
    await pausedRun("slack-remind");
    const move = (ms: number) =>
      runInDurableObject(env.RUNS.getByName("slack-remind"), (_o, s) => {
        s.storage.sql.exec("UPDATE approvals SET created_at = created_at - ?, expires_at = expires_at - ?", ms, ms);
        s.storage.sql.exec("UPDATE approval_mail SET due_at = due_at - ?", ms);
        s.storage.sql.exec("UPDATE slack_messages SET remind_at = remind_at - ?, escalate_at = escalate_at - ?", ms, ms);
      });
    /** The posts in this run's message's thread. */
    const mine = async () => {
      const row = await runInDurableObject(env.RUNS.getByName("slack-remind"), (_o, s) =>
        s.storage.sql.exec<{ ts: string }>("SELECT ts FROM slack_messages").one(),
      );
      return (await slackCalls()).filter((c) => c.method === "chat.postMessage" && c.body.thread_ts === row.ts).map((c) => c.body);
    };
    await move(4 * HOUR + 1000);
    await runDurableObjectAlarm(env.RUNS.getByName("slack-remind"));
    expect((await mine()).map((b) => b.text)).toEqual(["Reminder: this approval is still waiting for a decision."]);
    await runDurableObjectAlarm(env.RUNS.getByName("slack-remind"));
    expect(await mine()).toHaveLength(1);
    await move(20 * HOUR);
    await runDurableObjectAlarm(env.RUNS.getByName("slack-remind"));
    const posts = await mine();
    expect(posts).toHaveLength(2);
    expect(posts[1]!.text).toMatch(/^Escalated: .*alice@example\.com/);
    expect(posts.every((b) => b.channel === "COPS000000")).toBe(true);
  });

  it("one renderer: the approval page, the email and the Slack message show the same described call", async () => {
    const { posted, approval } = await pausedRun("slack-render");
    const summary = `POST ${env.FAKE_OPENAI_HOST}/effects/slack-render`;
    const body = JSON.stringify({ title: "as asked" }, null, 2);
    // The email (to the policy's named address).
    const mail = await parseMail(sent.find((m) => m.to === "lead@example.com")!);
    expect(mail.text).toContain(`${summary}\n${body}`);
    // The page the email links to.
    const link = /https:\/\/edgework\.test(\/approvals\/[^\s?]+)/.exec(mail.text!)![1]!;
    const page = await (await call(link)).text();
    const escaped = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    expect(page).toContain(escaped(summary));
    expect(page).toContain(escaped(body));
    // The Slack message.
    const blocks = (posted.body.blocks as any[]).map((b) => b.text?.text ?? "").join("\n");
    expect(blocks).toContain(`\`${summary}\``);
    expect(blocks).toContain(`\`\`\`${body}\`\`\``);
    expect(approval.tool).toBe("fx_fetch");
  });

  it("a question gets an Answer button; its modal's answer is the person's answer, once", async () => {
    await script("slack-asker", [
      { tool_calls: [{ id: "q", name: "people_ask", arguments: { question: "41 or 42? <!channel>", to: "lead@example.com" } }] },
      { text: "reported" },
    ]);
    await stub("slack-q").start({ id: "slack-q", worker: "slack-asker", input: { input: "go" }, approvalMode: "approve_all", budget: {} });
    expect((await settle("slack-q")).status).toBe("waiting");
    const [posted] = await callsFor("slack-q", "chat.postMessage");
    expect(posted!.body.channel).toBe("C0QUESTION1");
    const text = JSON.stringify(posted!.body.blocks);
    // The model's text cannot mention the channel: Slack's markup is escaped.
    expect(text).toContain("41 or 42? &lt;!channel&gt;");
    expect(text).not.toContain("<!channel>");
    expect((posted!.body.blocks as any[]).find((b) => b.type === "actions").elements.map((e: any) => e.action_id)).toEqual(["answer"]);
    // Approve is not an answer: a question takes one only through its modal.
    expect((await interaction(press(posted!, "U0LEAD0001", "approve"))).status).toBe(400);
    expect((await interaction(press(posted!, "U0LEAD0001", "answer"))).status).toBe(200);
    const view = (await slackCalls()).filter((c) => c.method === "views.open" && c.body.view.private_metadata.includes(buttonValue(posted!)))[0]!.body.view;
    const submit = () =>
      interaction({
        type: "view_submission",
        user: { id: "U0LEAD0001" },
        view: {
          callback_id: view.callback_id,
          private_metadata: view.private_metadata,
          state: { values: { edgework_input: { value: { type: "plain_text_input", value: " 42 " } } } },
        },
      });
    expect((await submit()).status).toBe(200);
    const done = await settle("slack-q");
    expect(done.status).toBe("succeeded");
    expect(done.approvals[0]).toMatchObject({ status: "approved", answer: "42", by: { via: "slack", email: "lead@example.com" } });
    expect(await (await submit()).json()).toMatchObject({ response_action: "errors" });
  });
});
