import { createMimeMessage } from "mimetext/browser";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { parseKey } from "../../src/engine/journal/keys";
import { runIdFor } from "../../src/triggers/delivery";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, deliver, parseMail } from "./support";

const DESK = "long-chat@example.com";
const BEA = "bea@example.com";
const MESSAGES = 120;

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** ~250 tokens of text, as the estimate counts. */
const long = (n: number) => `reply ${n}: ${"lorem ipsum ".repeat(83)}`;

function mail(m: { to: string; subject: string; text: string; messageId: string; inReplyTo?: string }) {
  const msg = createMimeMessage();
  msg.setSender(BEA);
  msg.setRecipient(m.to);
  msg.setSubject(m.subject);
  msg.setHeader("Message-ID", m.messageId);
  if (m.inReplyTo) msg.setHeader("In-Reply-To", m.inReplyTo);
  msg.addMessage({ contentType: "text/plain", data: m.text });
  return msg.asRaw();
}

describe("a long conversation by email (reply: true, context: summarize)", () => {
  it(`${MESSAGES} messages by reply: every answer mailed back, the history compacted, each summary asked once`, async () => {
    await script(
      "mail-long-chat",
      Array.from({ length: MESSAGES }, (_, i) => ({ text: `answer ${i + 1}` })),
    );
    await script(
      "mail-long-summary",
      Array.from({ length: MESSAGES }, (_, i) => ({ text: `summary ${i + 1}` })),
    );
    const first = "<long-1@example.com>";
    expect(await deliver(BEA, DESK, mail({ to: DESK, subject: "A long thread", text: long(1), messageId: first }))).toEqual([]);
    const id = await runIdFor("long-chat-mail", `message-id:${BEA}\n${first}`);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "answer 1" });
    for (let n = 2; n <= MESSAGES; n++) {
      const answer = await parseMail(sent.at(-1)!);
      const replyTo = answer.replyTo![0]!.address!;
      const raw = mail({ to: replyTo, subject: "Re: A long thread", text: long(n), messageId: `<long-${n}@example.com>`, inReplyTo: answer.messageId! });
      expect(await deliver(BEA, replyTo, raw), `reply ${n}`).toEqual([]);
      expect(await settle(id), `reply ${n}`).toMatchObject({ status: "succeeded", output: `answer ${n}` });
    }
    expect(sent.filter((m) => m.to === BEA)).toHaveLength(MESSAGES);
    const view = (await stub(id).status())!;
    expect(view.messages).toHaveLength(2 * MESSAGES);
    const journal = (await stub(id).journalSteps(0, 100_000))!.steps;
    const compactions = journal.filter((s) => parseKey(s.key).kind === "compact");
    expect(compactions.length).toBeGreaterThan(10);
    expect(view.compactions).toHaveLength(compactions.length);
    expect(await modelRequests("mail-long-summary")).toHaveLength(compactions.length);
    expect(await modelRequests("mail-long-chat")).toHaveLength(MESSAGES);
  }, 240_000);
});
