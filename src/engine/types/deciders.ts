/** Who may decide an approval, and who did (approvals/deciders.ts checks them). */

/** How a decision reached the run: an emailed link, a reply, the inbox (signed in), the API token, the inbox through Cloudflare Access, a Slack button. */
export type DecisionVia = "link" | "reply" | "inbox" | "api" | "access" | "slack";

/**
 * Who decided and how; `email` is null when the way proves no person (the API token, a session signed in with it).
 * `slack`: the Slack user id of a press (`via: "slack"`), matched by `slack:<id>` entries; `email` is then their verified Slack email, if any.
 */
export interface Decider {
  email: string | null;
  via: DecisionVia;
  slack?: string;
}

/** A tool's named deciders: `ask` entries (normalized), and whether the run's initiator may decide its own run's calls. */
export interface DeciderPolicy {
  /** Exact addresses, `*@domain`, `slack:<user id>`, or `api` (the API token and sessions signed in with it); absent: whoever the approval reaches. */
  ask?: string[];
  allowInitiator?: boolean;
  /** `false`: its calls are approved or rejected as asked: no edit of the arguments, no answer in the call's place (`editable: false`). */
  editable?: false;
}

/** A question for a person (`ctx.askHuman`, the `human` kind): emailed to `to` (else the worker's `notify`), answered by whom `deciders` admits. */
export interface HumanQuestion {
  question: string;
  to?: string;
  deciders?: DeciderPolicy;
}

/** What a question got: the person's answer, or why there is none (it expired: "no answer"). */
export type HumanAnswer = { answered: true; answer: string; by: Decider | null } | { answered: false; reason: string };
