import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createMimeMessage } from "mimetext/browser";
import PostalMime from "postal-mime";
import { vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import worker from "../support/test-worker";

/** Captures every email the app sends (and still sends it through the binding). */
export function captureMail(): OutgoingMail[] {
  const sent: OutgoingMail[] = [];
  const original = mailer.send;
  vi.spyOn(mailer, "send").mockImplementation(async (binding, mail) => {
    sent.push(mail);
    return original.call(mailer, binding, mail);
  });
  return sent;
}

export const parseMail = (mail: OutgoingMail) => PostalMime.parse(mail.raw);

/** A reply to a parsed approval email: `first` above the quoted original, as mail clients write it. */
export function replyTo(original: { text?: string; subject?: string }, from: string, to: string, first: string): string {
  const msg = createMimeMessage();
  msg.setSender(from);
  msg.setRecipient(to);
  msg.setSubject(`Re: ${original.subject ?? ""}`);
  const quoted = (original.text ?? "")
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");
  msg.addMessage({ contentType: "text/plain", data: `${first}\n\nOn Mon, 23 Nov 2026 at 09:00, edgework <edgework@example.com> wrote:\n${quoted}\n` });
  return msg.asRaw();
}

/** Delivers a message to the app's email() handler as Email Routing would; returns the reasons it was rejected with. */
export async function deliver(from: string, to: string, raw: string, headers: Record<string, string> = {}): Promise<string[]> {
  const bytes = new TextEncoder().encode(raw);
  const rejects: string[] = [];
  const message = {
    from,
    to,
    raw: new Response(bytes).body!,
    rawSize: bytes.byteLength,
    headers: new Headers(headers),
    setReject: (reason: string) => rejects.push(reason),
    forward: async () => {},
    reply: async () => {},
  } as unknown as ForwardableEmailMessage;
  await worker.email!(message, env, createExecutionContext());
  return rejects;
}
