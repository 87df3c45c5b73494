import { Hono } from "hono/tiny";
import * as z from "zod";
import { slackTriggers } from "../../catalog";
import { MAX_MESSAGE_CHARS } from "../../engine/run/conversation";
import { SLACK_USER } from "../../engine/slack/target";
import { checkStart, runStub, runView, startTriggerRun } from "../../runs";
import { slackApi } from "../../slack/api";
import { mrkdwnText } from "../../slack/approval-message";
import { slackThread, threadRunId, type SlackThreadTrigger } from "../../slack/thread";
import { SLASH_COMMAND } from "../../triggers/triggers-file";
import { refuse, signedSlackBody, slackRefused } from "./slack";

/** Slack's slash-command form, what edgework reads of it (the text bounded as a conversation's message is). */
const slashCommand = z.object({
  command: z.string().regex(SLASH_COMMAND),
  text: z.string().max(MAX_MESSAGE_CHARS),
  user_id: z.string().regex(SLACK_USER),
  channel_id: z.string().regex(/^[CGD][A-Z0-9]{8,20}$/),
});

/** An Events API delivery: the URL check, or a message event (what edgework reads of it). */
const eventDelivery = z.discriminatedUnion("type", [
  z.object({ type: z.literal("url_verification"), challenge: z.string().max(200) }),
  z.object({
    type: z.literal("event_callback"),
    event_id: z.string().max(100),
    event: z.looseObject({
      type: z.string().max(50),
      subtype: z.string().max(50).optional(),
      bot_id: z.string().max(50).optional(),
      user: z.string().max(30).optional(),
      channel: z.string().max(40).optional(),
      thread_ts: z.string().max(30).optional(),
      text: z.string().max(MAX_MESSAGE_CHARS).optional(),
    }),
  }),
]);

/**
 * The Slack trigger: `POST /slack/commands` (a slash command starts a run of the trigger's worker,
 * whose thread is the message it posts) and `POST /slack/events` (a reply in that thread, by the
 * person who started it, is the run's next message, as an emailed reply is). Both signed (routes/slack.ts).
 */
export const slackTrigger = new Hono<{ Bindings: Env }>();

slackTrigger.post("/commands", async (c) => {
  const body = await signedSlackBody(c);
  const parsed = slashCommand.safeParse(Object.fromEntries(new URLSearchParams(new TextDecoder().decode(body))));
  if (!parsed.success) throw refuse(400, "bad_command", "not a slash command edgework reads (command, text, user_id, channel_id)");
  const { command, text, user_id: user, channel_id: channel } = parsed.data;
  const t = slackTriggers().get(command);
  if (!t) throw refuse(404, "unknown_command", `no Slack trigger has the command ${command}`, { user });
  if (t.slack.channels && !t.slack.channels.includes(channel))
    throw refuse(403, "channel_not_allowed", `${command} is not enabled in this channel`, { user, channel });
  if (!text.trim()) return c.json({ response_type: "ephemeral", text: `Write what you want after ${command}.` });
  const checked = checkStart(t.worker, text);
  if ("status" in checked) return c.json({ response_type: "ephemeral", text: checked.error.slice(0, 500) });
  // The run's thread: the message that says it started; its ts names the run.
  let posted: { channel?: unknown; ts?: unknown };
  try {
    posted = await slackApi.call(c.env, "chat.postMessage", {
      channel,
      text: `<@${user}> asked ${mrkdwnText(t.worker)}: ${mrkdwnText(text)}`,
      unfurl_links: false,
    });
  } catch (err) {
    throw refuse(502, "post_failed", "Slack did not take the run's first message", { user, error: (err as Error).message });
  }
  const id = typeof posted.channel === "string" && typeof posted.ts === "string" ? threadRunId(posted.channel, posted.ts) : null;
  if (!id) throw refuse(502, "post_failed", "Slack's answer names no channel and message ts", { user });
  const trigger: SlackThreadTrigger = {
    kind: "slack",
    name: t.name,
    initiator: `slack:${user}`,
    channel: posted.channel as string,
    thread_ts: posted.ts as string,
  };
  await startTriggerRun(c.env, t, { id, checked, trigger: { ...trigger } });
  return c.json({ response_type: "ephemeral", text: `Started run ${id}; reply in its thread to continue.` });
});

slackTrigger.post("/events", async (c) => {
  const body = await signedSlackBody(c);
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw refuse(400, "bad_payload", "the event is not JSON");
  }
  const parsed = eventDelivery.safeParse(raw);
  if (!parsed.success) throw refuse(400, "unknown_payload", "not an event edgework reads");
  const d = parsed.data;
  if (d.type === "url_verification") return c.json({ challenge: d.challenge });
  const e = d.event;
  // Ours (a bot's, the app's own posts) and edits, joins and the like are no one's reply; answered 200 so Slack does not retry.
  const ignored = (reason: string) => c.json({ ignored: true, reason });
  if (e.type !== "message" || e.subtype !== undefined || e.bot_id !== undefined) return ignored("not a person's message");
  if (!e.thread_ts || !e.channel || !e.user || !e.text?.trim()) return ignored("not a reply in a thread");
  const id = threadRunId(e.channel, e.thread_ts);
  const run = id ? await runView(c.env, id) : null;
  const thread = run ? slackThread(run.trigger) : null;
  if (!id || !thread || thread.channel !== e.channel || thread.thread_ts !== e.thread_ts) return ignored("not the thread of a run");
  if (thread.initiator !== `slack:${e.user}`) {
    slackRefused("not_initiator", { user: e.user, run: id });
    return ignored("only the person who started this run continues it");
  }
  // The event's id makes Slack's redelivery the same message.
  const sent = await runStub(c.env, id).sendMessage(e.text, `slack:${d.event_id}`);
  if (!sent.ok) slackRefused("message_refused", { user: e.user, run: id, status: sent.status });
  return c.json(sent.ok ? { run: id, message: sent.message } : { ignored: true, reason: sent.error });
});
