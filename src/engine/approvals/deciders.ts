/**
 * Who may decide an approval: the policy a worker file names per tool
 * (`approval: {gh_fetch: {ask: [lead@example.com, "*@ops.example.com"]}}`), and
 * the check every decision passes. Addresses are compared as plain ASCII strings
 * (lowercased), never through a pattern built from them: linear, and no Unicode
 * case folding (`\u212A` lowercases to `k`) or look-alike can make one address another.
 */

import type { Decider, DeciderPolicy } from "../types/deciders";
import { SLACK_DECIDER_PREFIX, SLACK_USER } from "../slack/target";

export const MAX_DECIDERS = 20;
/** RFC 5321's limit on a forward path. */
export const MAX_ADDRESS_LENGTH = 254;
/** The entry that admits the API token (and sessions signed in with it). */
export const API_DECIDER = "api";

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const LOCAL = /^[a-z0-9!#$%&'+\-/=^_`{|}~.]{1,64}$/;

/** A domain of two or more DNS labels (no `*`, no TLD alone): `ops.example.com`. */
function domainOk(domain: string): boolean {
  const labels = domain.split(".");
  return labels.length >= 2 && labels.length <= 127 && labels.every((l) => LABEL.test(l));
}

/**
 * An address as compared: trimmed, ASCII lowercased; null for anything that is not
 * one plain ASCII `local@domain` (non-ASCII, spaces, controls, two `@`, over-long).
 */
export function normalizeAddress(raw: string): string | null {
  const a = raw.trim();
  if (!a || a.length > MAX_ADDRESS_LENGTH) return null;
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return null;
  }
  const lower = a.toLowerCase();
  const at = lower.indexOf("@");
  if (at < 1 || at !== lower.lastIndexOf("@")) return null;
  return LOCAL.test(lower.slice(0, at)) && domainOk(lower.slice(at + 1)) ? lower : null;
}

/** One `ask` entry as written → its normalized form, or why it is refused. */
export function readDeciderEntry(entry: string): { entry: string } | { problem: string } {
  const trimmed = entry.trim();
  if (trimmed.toLowerCase().startsWith(SLACK_DECIDER_PREFIX)) {
    const id = trimmed.slice(SLACK_DECIDER_PREFIX.length).toUpperCase();
    return SLACK_USER.test(id) ? { entry: `${SLACK_DECIDER_PREFIX}${id}` } : { problem: `"${entry}": a Slack user is slack:<user id> (slack:U0123ABCD)` };
  }
  const e = trimmed.toLowerCase();
  if (e === API_DECIDER) return { entry: e };
  if (e.startsWith("*@")) {
    const domain = e.slice(2);
    if (normalizeAddress(`x@${domain}`)) return { entry: e };
    return { problem: `"${entry}": a pattern is *@ and one ASCII domain of two or more labels (*@ops.example.com), nothing wider` };
  }
  const address = normalizeAddress(entry);
  return address ? { entry: address } : { problem: `"${entry}" is not a plain ASCII address, *@domain, slack:<user id> or ${API_DECIDER}` };
}

/** Whether an address is named by a normalized entry: exact equality, or the domain after `*@`. */
function named(entry: string, address: string): boolean {
  return entry.startsWith("*@") ? address.slice(address.indexOf("@") + 1) === entry.slice(2) : entry === address;
}

/** An address as recorded with a decision: normalized when plain, else as given (trimmed, bounded). */
export const recordedAddress = (raw: string) => normalizeAddress(raw) ?? raw.trim().slice(0, MAX_ADDRESS_LENGTH);

/** Addresses an approval can be emailed to: the exact ones of a policy (patterns, Slack users and `api` name nobody to write to). */
export const emailableDeciders = (policy: DeciderPolicy | undefined): string[] =>
  (policy?.ask ?? []).filter((e) => e !== API_DECIDER && !e.startsWith("*@") && !e.startsWith(SLACK_DECIDER_PREFIX));

/**
 * The initiator of a run started from an address that does not normalize (non-ASCII,
 * a trailing dot): nobody can be told apart from them, so the rule refuses every
 * person. Never equal to a normalized address (it has spaces).
 */
export const UNREADABLE_INITIATOR = "(an address that is not plain ASCII)";

/** Plus-addressing: `lead+x@example.com` reaches the mailbox of `lead@example.com`, so both are the same person. */
const mailbox = (address: string) => {
  const at = address.indexOf("@");
  const plus = address.indexOf("+");
  return plus >= 0 && plus < at ? address.slice(0, plus) + address.slice(at) : address;
};

const samePerson = (a: string, b: string) => mailbox(a) === mailbox(b);

/** Why a decision is refused: a code for logs (names no one), a reason for the person refused. */
export interface Refusal {
  code: "bad_address" | "initiator" | "no_person" | "not_named";
  reason: string;
}

/**
 * Why `decider` may not decide, or null when they may. `initiator`: the normalized
 * address of whoever started the run (an email trigger's sender, a signed-in user), if any,
 * or `slack:<user id>` (a Slack trigger's user), or `UNREADABLE_INITIATOR`. Initiator and decider
 * are compared without a `+tag`. A Slack presser (`decider.slack`) is named by `slack:<id>`, or by their verified email as anyone is.
 */
export function refusalOf(policy: DeciderPolicy | undefined, decider: Decider, initiator: string | null): Refusal | null {
  const ask = policy?.ask;
  const email = decider.email === null ? null : normalizeAddress(decider.email);
  const slackUser = decider.slack ? `${SLACK_DECIDER_PREFIX}${decider.slack}` : null;
  // Only a plain address can be told apart from the initiator's or matched to a list: anything else is refused where either matters.
  if (decider.email !== null && !email) {
    return ask || initiator ? { code: "bad_address", reason: "the deciding address is not a plain ASCII address" } : null;
  }
  if ((email || slackUser) && initiator && !policy?.allowInitiator) {
    if (initiator === UNREADABLE_INITIATOR)
      return {
        code: "initiator",
        reason:
          "this run was started from an address that cannot be told apart from yours, so no person may decide its approvals (the policy would need allow_initiator: true)",
      };
    if ((email && samePerson(email, initiator)) || slackUser === initiator)
      return { code: "initiator", reason: "the person who started this run may not decide its approvals (the policy would need allow_initiator: true)" };
    // A Slack starter and a decider known only by address, or an address and a Slack presser with no verified
    // email, name people in ways that cannot be compared: the starter could be deciding under another name.
    const slackStarter = initiator.startsWith(SLACK_DECIDER_PREFIX);
    if (slackStarter ? !slackUser : !email)
      return {
        code: "initiator",
        reason: `this run was started ${slackStarter ? "in Slack" : "by an email address"} and you are known here only ${slackStarter ? "by an address" : "as a Slack user with no verified email"}, so you cannot be told apart from who started it (the policy would need allow_initiator: true)`,
      };
  }
  if (!ask) return null;
  if (slackUser && ask.includes(slackUser)) return null;
  if (email === null) {
    if (ask.includes(API_DECIDER) && !slackUser) return null;
    const way = slackUser ? "a Slack user with no verified email" : decider.via === "api" ? "the API token" : "a session signed in with the API token";
    return { code: "no_person", reason: `this approval names who may decide it, and ${way} names no person` };
  }
  return ask.some((e) => e !== API_DECIDER && named(e, email))
    ? null
    : { code: "not_named", reason: `${slackUser ? `Slack user ${decider.slack} (${email})` : email} is not among the people this approval names` };
}
