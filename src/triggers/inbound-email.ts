import PostalMime from "postal-mime";
import { emailTriggers } from "../catalog";
import { readBounded } from "../http/read-body";
import { checkStart, startTriggerRun } from "../runs";
import { runIdFor } from "./delivery";
import { addressAllowed } from "./email-address";
import { soleFrom } from "./sole-from";
import { emailInput } from "./email-input";
import { sha256Hex } from "../engine/ids";
import { isAutomatic } from "../email/reply-approval";
import { emailTriggerRecord } from "./email-thread";
import type { EmailTrigger } from "./triggers-file";
import { runNotify } from "../notify/run-notify";
import { dmarcPassed } from "./dmarc";

/** The part of Cloudflare's ForwardableEmailMessage the trigger uses. */
export type InboundMessage = Pick<ForwardableEmailMessage, "from" | "to" | "raw" | "rawSize" | "headers" | "setReject">;

export type InboundOutcome =
  | { rejected: string }
  | { ignored: string }
  | { trigger: string; run_id: string; created: boolean }
  | { message: number; duplicate: boolean };

/**
 * A message arrived through Email Routing: find the trigger by the envelope
 * recipient, refuse senders outside its `allow_from` (envelope sender and the
 * From header, both) and oversized messages before they are read, parse the
 * rest with postal-mime, and start one run per message however often it is
 * delivered (a `reply: true` trigger also requires the From header to be the
 * envelope sender). Every refusal is `setReject(reason)`: the sender gets a bounce
 * saying why, and nothing starts. A trigger with `reply: true` mails its runs'
 * answers back: automatic mail to it is dropped silently (no loop with an
 * auto-responder). Replies to those answers come back through their Reply-To on the
 * reply domain (email-conversation.ts), never here: a mail here starts a run, whatever
 * In-Reply-To it names (ids only thread mail clients; relays rewrite them).
 */
export async function receiveEmail(env: Env, message: InboundMessage, triggers: Iterable<EmailTrigger> = emailTriggers().values()): Promise<InboundOutcome> {
  const reject = (reason: string): InboundOutcome => {
    message.setReject(reason);
    return { rejected: reason };
  };
  const to = message.to.trim().toLowerCase();
  const all = [...triggers];
  const t = all.find((x) => x.email.to === to);
  if (!t) return reject(`no trigger receives mail for ${to}`);
  // One of our own answer mails (a conversation's sender may be another trigger's address): dropped, neither a run nor a bounce to ourselves.
  if (isOurAnswer(message.headers, all)) return { ignored: "one of our own answer mails" };
  if (!addressAllowed(t.email.allow_from, message.from)) return reject(`${t.email.to} does not accept mail from ${message.from}`);
  if (t.email.reply && isAutomatic(message.headers)) return { ignored: "automatic message" };
  if (message.rawSize > t.email.max_bytes) return reject(`the message is ${message.rawSize} bytes; ${t.email.to} accepts at most ${t.email.max_bytes}`);

  // rawSize is the runtime's count; the read is bounded all the same.
  const raw = await readBounded(message.raw, t.email.max_bytes);
  if (!raw) return reject(`the message is larger than ${t.email.max_bytes} bytes`);
  let parsed: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    parsed = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  } catch (err) {
    return reject(`the message could not be parsed: ${(err as Error).message}`);
  }
  // The From header is what a reader (and the worker) sees as the sender: one address (sole-from.ts), passing the same list.
  // A conversation answers it: then a Sender header must name it too.
  const sole = soleFrom(parsed.headers, { sender: t.email.reply });
  if ("problem" in sole) return reject(`${sole.problem}; ${t.email.to} takes mail from one sender, named alone in From`);
  const from = sole.address;
  if (!addressAllowed(t.email.allow_from, from)) return reject(`${t.email.to} does not accept mail from ${from} (From header)`);
  // A conversation mails its answers to the From address and takes replies only from it: that must be
  // the address Email Routing authenticated (the envelope), as for approval replies, not one it merely names.
  if (t.email.reply && from !== message.from.trim().toLowerCase())
    return reject(`the From header (${from}) and the envelope sender differ; ${t.email.to} converses only with mail sent directly from its From address`);

  if (t.email.require_dmarc && !dmarcPassed(parsed.headers))
    return reject(`${t.email.to} accepts only mail whose receiving server reports dmarc=pass (its topmost Authentication-Results header)`);

  const input = emailInput(parsed, from, to);
  // Message-IDs are chosen by the sender: keyed with the sender, one cannot pre-empt another's.
  // Without one, the bytes identify the message (a redelivery repeats them).
  const messageKey = parsed.messageId ? `message-id:${from}\n${parsed.messageId}` : `sha256:${await sha256Hex(raw)}`;
  const checked = checkStart(t.worker, input);
  if ("status" in checked) return reject(checked.error);
  const id = await runIdFor(t.name, messageKey);
  // A trigger's notify URL the vars refuse is the operator's to fix: the run starts, and the log says why nobody hears of it.
  const hook = runNotify(env, t, { file: "triggers.yaml", field: `${t.name}.notify_url` });
  if ("error" in hook) console.warn(`trigger ${t.name}: its runs notify nobody: ${hook.error}`);
  const notify = "url" in hook && hook.url ? { url: hook.url } : undefined;
  const started = await startTriggerRun(env, t, { id, checked, trigger: emailTriggerRecord(t, input), notify });
  return { trigger: t.name, run_id: id, created: started.created };
}

/**
 * Whether a message is one of our own answer mails: it says it is automatic
 * (Auto-Submitted, as every answer does) and its From header names exactly one
 * address, one of our email triggers'. Not by Message-ID: Email Sending and relays
 * replace ours. Mail from anyone else that claims so is dropped, never routed: a
 * stranger can only silence their own message that pretends to come from us.
 */
function isOurAnswer(headers: Headers, triggers: readonly EmailTrigger[]): boolean {
  const auto = headers.get("auto-submitted")?.trim().toLowerCase();
  if (!auto || auto === "no") return false;
  const from = soleAddress(headers.get("from"));
  return !!from && triggers.some((x) => x.email.to === from);
}

/** `addr`, `<addr>` or `Name <addr>`, lowercase; null for anything else (several addresses, a group, an `@` in the name). */
function soleAddress(header: string | null): string | null {
  const m = /^\s*(?:[^<>@,;]*<([^<>\s@]+@[^<>\s@]+)>|([^<>\s@,;]+@[^<>\s@,;]+))\s*$/.exec((header ?? "").slice(0, 1000));
  return m ? (m[1] ?? m[2])!.toLowerCase() : null;
}
