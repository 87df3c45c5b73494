import { EmailMessage } from "cloudflare:email";
import { sentMessageId } from "./message-id";
import { asProductionSends, strictLocal } from "./strict-local";

export interface OutgoingMail {
  from: string;
  to: string;
  /** Raw MIME. */
  raw: string;
}

/** What sending needs of the Worker's env: the binding, and the strict local mode's vars (strict-local.ts). */
export type MailEnv = Pick<Env, "APPROVAL_EMAIL" | "STRICT_LOCAL" | "EMAIL_ALLOWED_RECIPIENTS">;

/**
 * The app's one seam for sending mail (through the `send_email` binding). Under
 * STRICT_LOCAL it first applies what production enforces (strict-local.ts). Tests spy
 * on `mailer.deliver` to capture what went out, as the platform was handed it.
 */
export const mailer = {
  /**
   * Sends one mail; resolves with the Message-ID it went out with (the platform's, when
   * it names one that fits a header), else null. Throws as the binding does: a refusal
   * says why (send-failure.ts).
   */
  async send(env: MailEnv, mail: OutgoingMail): Promise<{ messageId: string | null }> {
    if (!strictLocal(env)) return { messageId: sentMessageId((await mailer.deliver(env.APPROVAL_EMAIL, mail))?.messageId) };
    const sent = asProductionSends(env, mail);
    await mailer.deliver(env.APPROVAL_EMAIL, sent.mail);
    return { messageId: sent.messageId };
  },

  /** The binding's send: what the platform is handed. */
  async deliver(binding: SendEmail, mail: OutgoingMail): Promise<EmailSendResult | undefined> {
    return binding.send(new EmailMessage(mail.from, mail.to, mail.raw));
  },
};
