import { createServer } from "node:http";
import { listenOnLoopback } from "./loopback-server";

/** The bot token the test pool's SLACK_BOT_TOKEN holds: any other is `invalid_auth`, as Slack answers. */
export const FAKE_SLACK_TOKEN = "xoxb-test-token";

/**
 * Users.info's directory: a confirmed lead, a confirmed stranger, the lead's address unconfirmed, a bot.
 * Any other id is `user_not_found`.
 */
export const SLACK_USERS: Record<string, { email?: string; confirmed: boolean; bot?: boolean; guest?: boolean; stranger?: boolean; team?: string }> = {
  U0LEAD0001: { email: "lead@example.com", confirmed: true },
  U0EVE00001: { email: "eve@example.com", confirmed: true },
  U0UNCONF01: { email: "lead@example.com", confirmed: false },
  U0NOMAIL01: { confirmed: false },
  U0ALICE001: { email: "alice@example.com", confirmed: true },
  // The lead's address, confirmed — but a guest, or a user of another workspace in a shared channel.
  U0GUEST001: { email: "lead@example.com", confirmed: true, guest: true },
  U0STRNG001: { email: "lead@example.com", confirmed: true, stranger: true, team: "T0OTHER01" },
};

/** Where `#name` channels live in the fake (Slack answers a post with the channel's id). */
const channelId = (channel: string) =>
  channel.startsWith("#")
    ? `C${channel
        .slice(1)
        .toUpperCase()
        .replace(/[^A-Z0-9]/g, "")}`
        .slice(0, 12)
        .padEnd(10, "0")
    : channel;

/**
 * Slack's Web API on 127.0.0.1 for the Slack tests: `POST /api/<method>` records the call
 * (method, body, whether the token was ours, and its answer) and answers as Slack does for chat.postMessage
 * (a channel id and a fresh ts), chat.update, views.open and users.info (SLACK_USERS).
 * `GET /calls` reads every call so far; `PUT /fail/<method>` makes that method answer
 * `{ok: false, error: "fake_failure"}` until `DELETE /fail/<method>`.
 */
export async function startFakeSlack(): Promise<{ port: number; close: () => Promise<void> }> {
  const calls: Array<{ method: string; body: Record<string, unknown>; authorized: boolean; answer?: unknown }> = [];
  const failing = new Set<string>();
  let seq = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = req.url ?? "";
    const api = /^\/api\/([\w.]+)$/.exec(url);
    const send = (body: unknown) => {
      const call = calls.at(-1);
      if (call && api && call.answer === undefined) call.answer = body;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url === "/calls") return send(calls);
    const fail = /^\/fail\/([\w.]+)$/.exec(url);
    if (fail) {
      if (req.method === "PUT") failing.add(fail[1]!);
      else failing.delete(fail[1]!);
      return send({ ok: true });
    }
    if (!api || req.method !== "POST") {
      res.writeHead(404);
      return res.end();
    }
    const method = api[1]!;
    const authorized = req.headers.authorization === `Bearer ${FAKE_SLACK_TOKEN}`;
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    calls.push({ method, body, authorized });
    if (!authorized) return send({ ok: false, error: "invalid_auth" });
    if (failing.has(method)) return send({ ok: false, error: "fake_failure" });
    if (method === "chat.postMessage") {
      seq += 1;
      return send({ ok: true, channel: channelId(String(body.channel)), ts: `1700000000.${String(seq).padStart(6, "0")}` });
    }
    if (method === "chat.update") return send({ ok: true, channel: body.channel, ts: body.ts });
    if (method === "views.open") return send({ ok: true, view: { id: `V${seq}` } });
    if (method === "users.info") {
      const id = String(body.user);
      const u = SLACK_USERS[id];
      if (!u) return send({ ok: false, error: "user_not_found" });
      const user = { id, deleted: false, is_bot: !!u.bot, is_email_confirmed: u.confirmed, profile: u.email ? { email: u.email } : {} };
      return send({ ok: true, user: { ...user, team_id: u.team ?? "T0HOME0001", is_restricted: !!u.guest, is_stranger: !!u.stranger } });
    }
    send({ ok: false, error: "unknown_method" });
  });
  return listenOnLoopback(server);
}
