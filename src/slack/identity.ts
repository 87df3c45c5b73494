import type { Decider } from "../engine";
import { slackApi, type SlackEnv } from "./api";

/** A Slack user as users.info answers (only what edgework reads). */
interface SlackUser {
  id?: unknown;
  deleted?: unknown;
  is_bot?: unknown;
  is_email_confirmed?: unknown;
  profile?: { email?: unknown };
}

/**
 * Who a Slack press is, as a decider: their user id (named by `slack:<id>` in a policy), and
 * their email only when Slack says it is confirmed (for named addresses and the no-self-approval
 * rule); a bot, a deleted user or an unconfirmed address is no one's email. Throws as Slack does.
 */
export async function slackDecider(env: SlackEnv, userId: string): Promise<Decider> {
  const { user } = await slackApi.call<{ user?: SlackUser }>(env, "users.info", { user: userId });
  const email = user?.profile?.email;
  const verified =
    user?.id === userId &&
    user.deleted !== true &&
    user.is_bot !== true &&
    user.is_email_confirmed === true &&
    typeof email === "string" &&
    email.length <= 254;
  return { email: verified ? email : null, via: "slack", slack: userId };
}

/** How a Slack decision reads in `decided_by`. */
export const slackBy = (d: Decider) => `slack (${d.email ?? d.slack})`;
