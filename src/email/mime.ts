import { createMimeMessage, Mailbox } from "mimetext/browser";

/** Base64 in 76-character lines: keeps any UTF-8 text (arrows, names) valid in a 7-bit transport. */
function base64Lines(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/.{76}/g, "$&\r\n");
}

/**
 * A multipart/alternative message (text and HTML), as raw MIME. The subject is
 * encoded (no text can add a header through it); `headers` are written as given,
 * so their values must be checked by the caller (answer-mail.ts checks its Message-IDs).
 * `fromName`: the From display name ("edgework" unless given; empty: none).
 */
export function buildMime(m: {
  from: string;
  fromName?: string;
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}): string {
  const msg = createMimeMessage();
  msg.setSender({ name: m.fromName ?? "edgework", addr: m.from });
  msg.setRecipient(m.to);
  if (m.replyTo) msg.setHeader("Reply-To", new Mailbox(m.replyTo));
  msg.setSubject(m.subject);
  for (const [name, value] of Object.entries(m.headers ?? {})) msg.setHeader(name, value);
  msg.addMessage({ contentType: "text/plain", data: base64Lines(m.text), encoding: "base64" });
  msg.addMessage({ contentType: "text/html", data: base64Lines(m.html), encoding: "base64" });
  return msg.asRaw();
}
