import { EmailMessage } from "cloudflare:email";

export interface OutgoingMail {
  from: string;
  to: string;
  /** Raw MIME. */
  raw: string;
}

/**
 * The app's one seam for sending mail (through the `send_email` binding).
 * Tests spy on `mailer.send` to capture what would go out.
 */
export const mailer = {
  async send(binding: SendEmail, mail: OutgoingMail): Promise<void> {
    await binding.send(new EmailMessage(mail.from, mail.to, mail.raw));
  },
};
