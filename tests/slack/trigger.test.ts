import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunView } from "../../src/runs/types";
import { slackSignature } from "../../src/slack/signature";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";

const SIGNING = "test-slack-signing-secret";
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${url}`, init));
type SlackCall = { method: string; body: Record<string, any> };
const slackCalls = async (): Promise<SlackCall[]> => (await (await fetch(`${env.SLACK_API_BASE!.replace(/\/api$/, "")}/calls`)).json()) as SlackCall[];

async function signed(path: string, body: string, contentType: string, opts: { secret?: string; ts?: number } = {}) {
  const ts = opts.ts ?? Math.floor(Date.now() / 1000);
  return call(path, {
    method: "POST",
    headers: {
      "content-type": contentType,
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": await slackSignature(opts.secret ?? SIGNING, ts, body),
    },
    body,
  });
}
const command = (fields: Record<string, string>, opts?: { secret?: string }) =>
  signed("/slack/commands", new URLSearchParams(fields).toString(), "application/x-www-form-urlencoded", opts);
const event = (payload: unknown) => signed("/slack/events", JSON.stringify(payload), "application/json");
const reply = (run: RunView, user: string, text: string, eventId: string, extra: Record<string, unknown> = {}) => {
  const t = run.trigger as { channel: string; thread_ts: string };
  return event({
    type: "event_callback",
    event_id: eventId,
    event: { type: "message", channel: t.channel, thread_ts: t.thread_ts, user, text, ts: "1.2", ...extra },
  });
};

let warned: string[] = [];
beforeEach(() => {
  warned = [];
  vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warned.push(args.map(String).join(" ")));
});
afterEach(() => vi.restoreAllMocks());

/** What the model's last request ended with: the user's latest message. */
const lastUserMessage = async () => {
  const last = (await modelRequests("slack-chat")).at(-1) as { messages: Array<{ role: string; content: string }> };
  return last.messages.filter((m) => m.role === "user").at(-1)!.content;
};

describe("the slack trigger", () => {
  it("a signed slash command starts a run (input: its text; initiator: the Slack user) whose thread is the message it posts", async () => {
    await script("slack-chat", [{ text: "first answer" }, { text: "second answer" }]);
    const res = await command({ command: "/ask", text: "what broke last night?", user_id: "U0LEAD0001", channel_id: "C0CHAT0001", trigger_id: "t" });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { response_type: string; text: string };
    expect(answer.response_type).toBe("ephemeral");
    const id = /run (slack_C0CHAT0001_\d+_\d+)/.exec(answer.text)![1]!;
    const first = (await slackCalls()).filter((c) => c.method === "chat.postMessage" && c.body.channel === "C0CHAT0001");
    expect(first.at(-1)!.body.text).toBe("<@U0LEAD0001> asked slack-chat: what broke last night?");
    const done = await settle(id);
    expect(done).toMatchObject({
      status: "succeeded",
      output: "first answer",
      trigger: { kind: "slack", name: "slack-ask", initiator: "slack:U0LEAD0001", channel: "C0CHAT0001", thread_ts: expect.stringMatching(/^1700000000\./) },
    });
    expect(await lastUserMessage()).toBe("what broke last night?");
    // Its answer is posted in the thread, once.
    const thread = done.trigger as { channel: string; thread_ts: string };
    const inThread = async () =>
      (await slackCalls()).filter((c) => c.method === "chat.postMessage" && c.body.thread_ts === thread.thread_ts).map((c) => c.body.text);
    expect(await inThread()).toEqual(["first answer"]);

    // A reply in its thread by whoever started it continues the conversation, once however often Slack delivers it.
    expect((await reply(done, "U0LEAD0001", "and the night before?", "Ev1")).status).toBe(200);
    expect(await (await reply(done, "U0LEAD0001", "and the night before?", "Ev1")).json()).toMatchObject({ run: id });
    const again = await settle(id);
    expect(again).toMatchObject({ status: "succeeded", output: "second answer" });
    expect(await lastUserMessage()).toBe("and the night before?");
    expect((await stub(id).eventsSince())!.events.filter((e) => e.type === "run_succeeded")).toHaveLength(2);
    expect(await inThread()).toEqual(["first answer", "second answer"]);
  });

  it("others' replies, bot messages and edits continue nothing; the URL check is answered; unsigned, unknown and disallowed commands start nothing", async () => {
    await script("slack-chat", [{ text: "only answer" }]);
    const res = await command({ command: "/ask", text: "hello", user_id: "U0LEAD0001", channel_id: "C0CHAT0002" });
    const id = /run (\S+);/.exec(((await res.json()) as { text: string }).text)![1]!;
    const run = await settle(id);
    const events = async () => (await stub(id).eventsSince())!.events.length;
    const before = await events();
    expect(await (await reply(run, "U0EVE00001", "do something else", "Ev2")).json()).toMatchObject({ ignored: true });
    expect(warned.some((w) => w.includes('"reason":"not_initiator"'))).toBe(true);
    expect(await (await reply(run, "U0LEAD0001", "echo", "Ev3", { bot_id: "B0OURS" })).json()).toMatchObject({ ignored: true });
    expect(await (await reply(run, "U0LEAD0001", "edited", "Ev4", { subtype: "message_changed" })).json()).toMatchObject({ ignored: true });
    // A thread that is no run's, and a channel that does not match the run's.
    const t = run.trigger as { thread_ts: string };
    expect(
      await (
        await event({
          type: "event_callback",
          event_id: "Ev5",
          event: { type: "message", channel: "C0ELSEWHER", thread_ts: t.thread_ts, user: "U0LEAD0001", text: "x" },
        })
      ).json(),
    ).toMatchObject({ ignored: true });
    expect(await events()).toBe(before);
    expect((await stub(id).status())!.status).toBe("succeeded");

    expect(await (await event({ type: "url_verification", challenge: "chal-123" })).json()).toEqual({ challenge: "chal-123" });
    const runsBefore = (await slackCalls()).length;
    expect((await command({ command: "/ask", text: "x", user_id: "U0LEAD0001", channel_id: "C0CHAT0003" }, { secret: "forged" })).status).toBe(401);
    expect((await command({ command: "/nope", text: "x", user_id: "U0LEAD0001", channel_id: "C0CHAT0003" })).status).toBe(404);
    expect((await command({ command: "/ops-ask", text: "x", user_id: "U0LEAD0001", channel_id: "C0CHAT0003" })).status).toBe(403);
    expect((await command({ command: "/ask", text: "x", user_id: "<!channel>", channel_id: "C0CHAT0003" })).status).toBe(400);
    expect((await slackCalls()).length).toBe(runsBefore);
    expect((await signed("/slack/events", "{nope", "application/json")).status).toBe(400);
  });
});
