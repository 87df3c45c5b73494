/**
 * Where a worker's approvals go in Slack (`approval.notify.slack`): a channel by name
 * (`#ops`: Slack's own rule, 1-80 of a-z 0-9 - _) or a conversation or user id
 * (`C0123ABCD`, `U0123ABCD`). Checked at build time; nothing else reaches the API's `channel`.
 */
export const SLACK_TARGET = /^(?:#[a-z0-9_-]{1,80}|[CGDU][A-Z0-9]{8,20})$/;

/** A Slack user id as Slack sends it in an interaction (`U…`, `W…` for enterprise users). */
export const SLACK_USER = /^[UW][A-Z0-9]{8,20}$/;

/** A policy's `ask:` entry naming a Slack user: `slack:U0123ABCD`. */
export const SLACK_DECIDER_PREFIX = "slack:";
