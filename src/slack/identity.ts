import type { Decider } from "../engine";
import { slackApi, type SlackEnv } from "./api";

/** A Slack user as users.info answers (only what edgework reads). */
interface SlackUser {
  id?: unknown;
  deleted?: unknown;
  is_bot?: unknown;
  is_email_confirmed?: unknown;
  is_restricted?: unknown;
  is_ultra_restricted?: unknown;
  is_stranger?: unknown;
  team_id?: unknown;
  profile?: { email?: unknown };
}

/**
 * Who a Slack press is, as a decider: their user id (named by `slack:<id>` in a policy), and
 * their email only when Slack says it is confirmed (for named addresses and the no-self-approval
 * rule); a bot, a deleted user or an unconfirmed address is no one's email. Throws as Slack does.
 */
export async function slackDecider(env: SlackEnv, userId: string): Promise<Decider> {
  const { user } = await slackApi.call<{ user?: SlackUser }>(env, "users.info", { user: userId });
  const outsider = outsiderReason(env, user);
  if (outsider) throw new SlackOutsider(outsider);
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

/** A presser who is not a full member of the workspace: a guest, a user from another workspace in a shared channel. */
export class SlackOutsider extends Error {
  override readonly name = "SlackOutsider";
}

/**
 * Why a Slack user may not decide at all, or undefined: guests (single- and multi-channel) and
 * people of another workspace see a shared channel's messages, but an approval posted there is
 * for the workspace (with SLACK_TEAM_ID set, any other team is refused).
 */
function outsiderReason(env: SlackEnv, user: SlackUser | undefined): string | undefined {
  if (user?.is_restricted === true || user?.is_ultra_restricted === true) return "a guest of the workspace";
  if (user?.is_stranger === true) return "a user of another workspace";
  if (env.SLACK_TEAM_ID && user?.team_id !== env.SLACK_TEAM_ID) return "not a member of the configured workspace (SLACK_TEAM_ID)";
  return undefined;
}

/** How a Slack decision reads in `decided_by`. */
export const slackBy = (d: Decider) => `slack (${d.email ?? d.slack})`;
