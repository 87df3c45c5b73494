import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createMimeMessage } from "mimetext/browser";
import PostalMime from "postal-mime";
import { vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import worker from "../support/test-worker";

/**
 * Captures every email the app sends, as the binding is handed it (after the strict
 * local mode replaced its Message-ID: what a recipient would get), and still sends it.
 * `vi.mocked(mailer.deliver)` then fails a send as the platform would.
 */
export function captureMail(): OutgoingMail[] {
  const sent: OutgoingMail[] = [];
  const original = mailer.deliver;
  vi.spyOn(mailer, "deliver").mockImplementation(async (binding, mail) => {
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

/** The header block of a raw message, unfolded, as Email Routing hands it to the handler (`message.headers`). */
function headersOf(raw: string): Headers {
  const headers = new Headers();
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && /^[!-9;-~]+$/.test(line.slice(0, colon))) headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return headers;
}

/**
 * Delivers a message to the app's email() handler as Email Routing would (its headers
 * read from the raw message, `headers` added or replacing them); returns the reasons
 * it was rejected with.
 */
export async function deliver(from: string, to: string, raw: string, headers: Record<string, string> = {}): Promise<string[]> {
  const bytes = new TextEncoder().encode(raw);
  const rejects: string[] = [];
  const all = headersOf(raw);
  for (const [name, value] of Object.entries(headers)) all.set(name, value);
  const message = {
    from,
    to,
    raw: new Response(bytes).body!,
    rawSize: bytes.byteLength,
    headers: all,
    setReject: (reason: string) => rejects.push(reason),
    forward: async () => {},
    reply: async () => {},
  } as unknown as ForwardableEmailMessage;
  await worker.email!(message, env, createExecutionContext());
  return rejects;
}
