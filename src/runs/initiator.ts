import { normalizeAddress, UNREADABLE_INITIATOR } from "../engine";
import { SLACK_DECIDER_PREFIX, SLACK_USER } from "../engine/slack/target";

/**
 * The address a run's trigger names as who started it, as given: an email trigger's
 * sender (`from`), or the `initiator` of an API start (the signed-in person) or a fork
 * (its source's). Null when no person started it (the API token, a webhook, a schedule).
 */
export function initiatorAddress(trigger: unknown): string | null {
  const t = (trigger ?? {}) as Record<string, unknown>;
  const who = t.kind === "email" ? t.from : t.initiator;
  return typeof who === "string" ? who : null;
}

/**
 * The person who started a run, normalized (a Slack trigger's `slack:<user id>` as is); `UNREADABLE_INITIATOR` when the address
 * does not normalize (the rule then refuses every person: fail closed, not open).
 */
export function initiatorOf(trigger: unknown): string | null {
  const who = initiatorAddress(trigger);
  if (who?.startsWith(SLACK_DECIDER_PREFIX) && SLACK_USER.test(who.slice(SLACK_DECIDER_PREFIX.length))) return who;
  return who === null ? null : (normalizeAddress(who) ?? UNREADABLE_INITIATOR);
}
