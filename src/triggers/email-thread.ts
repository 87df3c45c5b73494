import { normalizeAddress } from "../engine";
import type { EmailInput } from "./email-input";
import type { EmailTrigger } from "./triggers-file";

/**
 * What a run started by mail records as its trigger (`trigger` on GET /runs/:id),
 * and, for a trigger with `reply: true`, what its answer mails need later, whatever
 * the deploy then: the trigger's address (the answers' From, the replies' To and
 * the domain of our Message-IDs) and the first message's subject.
 */
export const emailTriggerRecord = (t: EmailTrigger, input: EmailInput) => ({
  kind: "email",
  name: t.name,
  from: input.from,
  message_id: input.message_id,
  ...(t.email.reply ? { reply: true, to: t.email.to, subject: input.subject } : {}),
});

/** A conversing run's trigger record, read back. */
export interface EmailThread {
  /** The sender who started it (normalized): the answers go to them, and only their replies continue it. */
  from: string;
  /** The trigger's address. */
  to: string;
  subject: string;
  /** The first message's Message-ID, as the sender set it (checked before it goes into a header). */
  message_id: string | null;
}

/**
 * The thread of a run started by a `reply: true` email trigger; null for any other run,
 * and for addresses that do not normalize (they go into headers: nothing but a plain address).
 */
export function emailThread(trigger: unknown): EmailThread | null {
  const t = (trigger ?? {}) as Record<string, unknown>;
  if (t.kind !== "email" || t.reply !== true || typeof t.from !== "string" || typeof t.to !== "string") return null;
  const from = normalizeAddress(t.from);
  const to = normalizeAddress(t.to);
  if (!from || !to) return null;
  return {
    from,
    to,
    subject: typeof t.subject === "string" ? t.subject : "",
    message_id: typeof t.message_id === "string" ? t.message_id : null,
  };
}

/** The domain of an address, lowercase. */
export const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase();

/** What answer mails need that is not configured (they are then not sent; the run is not affected). */
export function missingAnswerMail(env: Env): string[] {
  return [...(env.APPROVAL_EMAIL ? [] : ["the APPROVAL_EMAIL send_email binding"]), ...(env.APPROVAL_SECRET ? [] : ["APPROVAL_SECRET"])];
}
