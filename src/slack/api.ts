import { readBounded } from "../http/read-body";

/** The Web API methods edgework calls; nothing else is ever sent a token. */
export type SlackMethod = "chat.postMessage" | "chat.update" | "views.open" | "users.info";

/** What calling Slack needs of the Worker's env: the bot token (secret) and the API base (an operator var, never from a request). */
export type SlackEnv = Pick<Env, "SLACK_BOT_TOKEN" | "SLACK_API_BASE" | "SLACK_TEAM_ID">;

export const DEFAULT_SLACK_API = "https://slack.com/api";
/** The most of a Web API answer read: Slack's answers to these methods are a few KiB. */
const MAX_ANSWER_BYTES = 256 * 1024;

/** A Web API call that did not succeed: the method, and Slack's error code (or the HTTP status); never the token. */
export class SlackApiError extends Error {
  override readonly name = "SlackApiError";
  constructor(
    readonly method: SlackMethod,
    readonly code: string,
  ) {
    super(`Slack ${method} failed: ${code}`);
  }
}

/** Whether Slack can be called at all (a bot token set). */
export const slackConfigured = (env: SlackEnv) => !!env.SLACK_BOT_TOKEN;

/**
 * The app's one seam for Slack's Web API: POSTs JSON with the bot token to
 * `SLACK_API_BASE/<method>`, reads at most MAX_ANSWER_BYTES of the answer and resolves
 * with it when Slack says `ok`; throws SlackApiError otherwise.
 */
export const slackApi = {
  async call<T extends Record<string, unknown>>(env: SlackEnv, method: SlackMethod, body: Record<string, unknown>): Promise<T> {
    if (!env.SLACK_BOT_TOKEN) throw new SlackApiError(method, "SLACK_BOT_TOKEN is not set");
    const base = (env.SLACK_API_BASE || DEFAULT_SLACK_API).replace(/\/+$/, "");
    const res = await fetch(`${base}/${method}`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.SLACK_BOT_TOKEN}`, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify(body),
      redirect: "manual",
    });
    const bytes = res.body ? await readBounded(res.body, MAX_ANSWER_BYTES) : null;
    if (!res.ok || !bytes) throw new SlackApiError(method, res.ok ? "the answer was empty or too large" : `HTTP ${res.status}`);
    let answer: unknown;
    try {
      answer = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new SlackApiError(method, "the answer is not JSON");
    }
    const a = answer as { ok?: unknown; error?: unknown } | null;
    if (a?.ok !== true) throw new SlackApiError(method, typeof a?.error === "string" ? a.error.slice(0, 100) : "not ok");
    return a as T;
  },
};
