import { listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { createMimeMessage } from "mimetext/browser";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_REFERENCES, threadReferences } from "../../src/email/answer-mail";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import { MAX_MESSAGE_CHARS } from "../../src/engine/run/conversation";
import { conversationReference, parseConversationReference } from "../../src/tokens/conversation-id";
import { objectReference, replyReference } from "../../src/tokens/reply-reference";
import { runIdFor } from "../../src/triggers/delivery";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, deliver, parseMail } from "./support";

const HELP = "help@example.com";
const ANN = "ann@example.com";
/** Where replies to our answers go: the conversation's reference (conversation-id.ts) on the reply domain. */
const REPLY_TO = /^c[a-z2-7]{63}@reply\.edgework\.test$/;
/** The strict local mode replaces our Message-IDs on send, as Email Sending does. */
const PLATFORM_ID = /^<[0-9a-f-]{36}@email\.strict-local\.invalid>$/;

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** A mail as a client writes it: a reply names what it answers (In-Reply-To, References) and quotes it under an attribution. */
function mail(m: { from: string; to?: string; subject: string; text: string; messageId?: string; inReplyTo?: string; references?: string[]; quote?: string }) {
  const msg = createMimeMessage();
  msg.setSender(m.from);
  msg.setRecipient(m.to ?? HELP);
  msg.setSubject(m.subject);
  if (m.messageId) msg.setHeader("Message-ID", m.messageId);
  if (m.inReplyTo) msg.setHeader("In-Reply-To", m.inReplyTo);
  if (m.references) msg.setHeader("References", m.references.join(" "));
  const quoted = m.quote === undefined ? "" : `\n\nOn Mon, 23 Nov 2026 at 09:00, <${HELP}> wrote:\n${m.quote.replace(/^/gm, "> ")}\n`;
  msg.addMessage({ contentType: "text/plain", data: `${m.text}${quoted}` });
  return msg.asRaw();
}

const runIdOf = (from: string, messageId: string) => runIdFor("chat-mail", `message-id:${from}\n${messageId}`);
const runObjects = async () => (await listDurableObjectIds(env.RUNS)).length;
const userTexts = async (id: string) => (await stub(id).status())!.messages.filter((m) => m.role === "user").map((m) => m.text);

/** The answer mails sent to `to`, parsed. */
async function answersTo(to: string) {
  return Promise.all(sent.filter((m) => m.to === to).map(async (m) => ({ mail: m, parsed: await parseMail(m) })));
}

/** A conversation started by `from`'s first mail, answered once: the run's id, our first answer's Message-ID (as delivered) and its Reply-To. */
async function started(tag: string, answers: string[], from = ANN) {
  await script(
    "mail-chat",
    answers.map((text) => ({ text })),
  );
  const first = `<${tag}-1@example.com>`;
  expect(await deliver(from, HELP, mail({ from, subject: `Printer ${tag}`, text: "It's on fire.", messageId: first }))).toEqual([]);
  const id = await runIdOf(from, first);
  expect(await settle(id)).toMatchObject({ status: "succeeded", output: answers[0] });
  const answer = (await answersTo(from)).find((a) => a.parsed.inReplyTo === first)!;
  return { id, first, ours: answer.parsed.messageId!, replyTo: answer.parsed.replyTo![0]!.address! };
}

/** The reply address of run `id`'s answers, minted as the app mints it (the test knows the secret). */
const replyAddressOf = async (id: string) => `${await conversationReference(env.RUNS.idFromName(id).toString(), env.APPROVAL_SECRET!)}@reply.edgework.test`;

describe("a support conversation by email (trigger reply: true)", () => {
  it("round-trips: mail in → answer mailed back → reply to its Reply-To → second answer, threaded; one history, usage summed", async () => {
    await script("mail-chat", [{ text: "Unplug it." }, { text: "Then call the fire brigade <b>now</b>." }]);
    const first = "<trip-1@example.com>";
    expect(await deliver(ANN, HELP, mail({ from: "Ann <ann@example.com>", subject: "Printer on fire", text: "It's on fire.", messageId: first }))).toEqual([]);
    const id = await runIdOf(ANN, first);
    expect((await stub(id).status())!.trigger).toMatchObject({
      kind: "email",
      name: "chat-mail",
      from: ANN,
      reply: true,
      to: HELP,
      subject: "Printer on fire",
    });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "Unplug it." });

    const [one] = await answersTo(ANN);
    expect(one!.mail.from).toBe(HELP);
    const a1 = one!.parsed;
    expect(a1.from?.address).toBe(HELP);
    expect(a1.to?.map((t) => t.address)).toEqual([ANN]);
    expect(a1.replyTo?.map((t) => t.address)).toEqual([await replyAddressOf(id)]);
    expect(a1.replyTo![0]!.address).toMatch(REPLY_TO);
    expect(a1.subject).toBe("Re: Printer on fire");
    expect(a1.inReplyTo).toBe(first);
    expect(a1.references).toBe(first);
    expect(a1.messageId).toMatch(PLATFORM_ID);
    expect(a1.headers.find((h) => h.key === "auto-submitted")?.value).toBe("auto-replied");
    expect(a1.text).toContain("Unplug it.");

    // Ann replies above the quoted answer, from her client (to the Reply-To): Re: Re: must not pile up.
    const reply = "<trip-2@example.com>";
    const raw = mail({
      from: ANN,
      to: a1.replyTo![0]!.address!,
      subject: "Re: Printer on fire",
      text: "It is still smoking.",
      messageId: reply,
      inReplyTo: a1.messageId!,
      references: [first, a1.messageId!],
      quote: a1.text!,
    });
    expect(await deliver(ANN, a1.replyTo![0]!.address!, raw)).toEqual([]);
    expect((await stub(id).status())!.status).toBe("running");
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", output: "Then call the fire brigade <b>now</b>." });

    const answers = await answersTo(ANN);
    expect(answers).toHaveLength(2);
    const a2 = answers[1]!.parsed;
    expect(a2.subject).toBe("Re: Printer on fire");
    expect(a2.inReplyTo).toBe(reply);
    // The first answer is referenced by the id it went out with, not by ours.
    expect(a2.references!.split(/\s+/)).toEqual([first, a1.messageId, reply]);
    expect(a2.messageId).toMatch(PLATFORM_ID);
    expect(a2.replyTo![0]!.address).toBe(a1.replyTo![0]!.address);
    // The answer is model output: markup in it is text in the HTML part.
    expect(a2.html).toContain("&lt;b&gt;now&lt;/b&gt;");
    expect(a2.html).not.toContain("<b>now</b>");

    // One history: the model saw the first mail and the reply's new text (not the quote), and its first answer.
    const requests = (await modelRequests("mail-chat")) as Array<{ messages: Array<{ role: string; content: string }> }>;
    expect(requests).toHaveLength(2);
    const users = requests[1]!.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toHaveLength(2);
    expect(users[0]).toContain("It's on fire.");
    expect(users[1]).toBe("It is still smoking.");
    expect(requests[1]!.messages.some((m) => m.role === "assistant" && m.content === "Unplug it.")).toBe(true);
    // The fake model counts 10 input and 5 output tokens a request.
    expect(done.usage).toMatchObject({ requests: 2, inputTokens: 20, outputTokens: 10 });
    // GET /runs/:id and the run page show the emailed reply as a message of the conversation.
    expect(done.messages.map((m) => `${m.role}:${m.text}`)).toEqual([
      expect.stringContaining("user:"),
      "assistant:Unplug it.",
      "user:It is still smoking.",
      "assistant:Then call the fire brigade <b>now</b>.",
    ]);
  });

  it("continues across three replies when every Message-ID is replaced on send; replies with only the Reply-To (no In-Reply-To, no References) reach the right run", async () => {
    // Bea's conversation first: the fake model's script is one per worker.
    const b = await started("three-b", ["b1"], "bea@example.com");
    const a = await started("three", ["a1", "a2", "a3", "a4"]);
    for (const n of [2, 3, 4]) {
      const raw = mail({ from: ANN, to: a.replyTo, subject: "Re: Printer", text: `m${n}`, messageId: `<three-r${n}@example.com>` });
      expect(raw).not.toMatch(/^(in-reply-to|references):/im);
      expect(await deliver(ANN, a.replyTo, raw)).toEqual([]);
      expect(await settle(a.id)).toMatchObject({ status: "succeeded", output: `a${n}` });
    }
    expect(await userTexts(a.id)).toEqual([expect.any(String), "m2", "m3", "m4"]);
    expect(await userTexts(b.id)).toHaveLength(1);
    const answers = (await answersTo(ANN)).map((x) => x.parsed);
    expect(answers).toHaveLength(4);
    for (const x of answers) {
      expect(x.messageId).toMatch(PLATFORM_ID);
      expect(x.replyTo![0]!.address).toBe(a.replyTo);
    }
    // Each answer threads under the reply it answers and the answers before it, as they went out.
    expect(answers[3]!.references!.split(/\s+/)).toEqual([
      a.first,
      answers[0]!.messageId,
      "<three-r2@example.com>",
      answers[1]!.messageId,
      "<three-r3@example.com>",
      answers[2]!.messageId,
      "<three-r4@example.com>",
    ]);
    const sentIds = (await stub(a.id).eventsSince("0-0", 500))!.events.filter((e) => e.type === "answer_emailed").map((e) => e.data.message_id);
    expect(sentIds).toEqual(answers.map((x) => x.messageId));
  });

  it("a reply whose reference is forged, or carries another run's MAC, is refused and starts nothing", async () => {
    const a = await started("forge-a", ["a1"]);
    const b = await started("forge-b", ["b1"], "bea@example.com");
    const refOf = (address: string) => parseConversationReference(address.split("@")[0]!)!;
    const bytes = (hex: string) => Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
    // A's object id with B's MAC: a valid MAC, of another run.
    const swapped = `c${objectReference(refOf(a.replyTo).objectId, bytes(refOf(b.replyTo).mac))}@reply.edgework.test`;
    // One character of A's MAC changed.
    const flipped = `${a.replyTo.slice(0, 60)}${a.replyTo[60] === "a" ? "b" : "a"}${a.replyTo.slice(61)}`;
    const before = await runObjects();
    for (const [n, forged] of [swapped, flipped].entries()) {
      const rejects = await deliver(ANN, forged, mail({ from: ANN, to: forged, subject: "Re: x", text: "let me in", messageId: `<forge-r${n}@example.com>` }));
      expect(rejects).toEqual(["this reply names no conversation of ours; write a new message to start one"]);
    }
    expect(await runObjects()).toBe(before);
    expect(await userTexts(a.id)).toHaveLength(1);
    expect(await userTexts(b.id)).toHaveLength(1);
  });

  it("only the sender who started it can reply; another allowed address, or another conversation's sender, is refused", async () => {
    const a = await started("who", ["a1"]);
    const b = await started("who-b", ["b1"], "bea@example.com");
    const rejects = await deliver(
      "bob@example.com",
      a.replyTo,
      mail({ from: "bob@example.com", subject: "Re: x", text: "me too", messageId: "<who-r@example.com>" }),
    );
    expect(rejects).toEqual(["only the address that started this conversation can reply to it"]);
    // Bea holds her own reference; Ann's is not hers to use.
    const crossed = await deliver(
      "bea@example.com",
      a.replyTo,
      mail({ from: "bea@example.com", subject: "Re: x", text: "hi", messageId: "<who-b2@example.com>" }),
    );
    expect(crossed).toEqual(["only the address that started this conversation can reply to it"]);
    expect(await userTexts(a.id)).toHaveLength(1);
    expect(await userTexts(b.id)).toHaveLength(1);
  });

  it("a run that failed mails no answer, and a reply to its reference is refused with the reason", async () => {
    const call = { tool_calls: [{ name: "no_such_tool", arguments: {} }] };
    await script("mail-chat", [call, call, call]);
    const first = "<failed-1@example.com>";
    expect(await deliver(ANN, HELP, mail({ from: ANN, subject: "F", text: "hi", messageId: first }))).toEqual([]);
    const id = await runIdOf(ANN, first);
    expect(await settle(id)).toMatchObject({ status: "failed" });
    expect(sent.filter((m) => m.to === ANN && m.raw.includes(first))).toHaveLength(0);
    // The address its answer would have had (minted as the app would: the test knows the secret).
    const address = await replyAddressOf(id);
    const rejects = await deliver(ANN, address, mail({ from: ANN, subject: "Re: F", text: "well?", messageId: "<failed-2@example.com>" }));
    expect(rejects).toEqual([expect.stringContaining("the run failed")]);
  });

  it("the same reply delivered twice adds one message; a second reply while the run answers waits its turn and is answered", async () => {
    const a = await started("twice", ["a1", "a2", "a3"]);
    const raw = mail({ from: ANN, subject: "Re: x", text: "second", messageId: "<twice-r@example.com>", inReplyTo: a.ours });
    expect(await deliver(ANN, a.replyTo, raw)).toEqual([]);
    // A relay's redelivery (another header, same Message-ID from the same sender): the same message, answered ok.
    expect(await deliver(ANN, a.replyTo, `Received: by relay.example.com\r\n${raw}`)).toEqual([]);
    const busy = await deliver(ANN, a.replyTo, mail({ from: ANN, subject: "Re: x", text: "third", messageId: "<twice-r3@example.com>" }));
    expect(busy).toEqual([]);
    await settle(a.id);
    // Delivered again after the answers: still one message each.
    expect(await deliver(ANN, a.replyTo, raw)).toEqual([]);
    expect(await userTexts(a.id)).toEqual([expect.any(String), "second", "third"]);
    expect((await answersTo(ANN)).filter((x) => x.parsed.inReplyTo === "<twice-r@example.com>")).toHaveLength(1);
    expect((await answersTo(ANN)).filter((x) => x.parsed.inReplyTo === "<twice-r3@example.com>")).toHaveLength(1);
  });

  it("a long reply is cut to the message bound; an empty one (only the quote) is refused; automatic mail is dropped silently", async () => {
    const a = await started("bounds", ["a1", "a2"]);
    const quoteOnly = await deliver(ANN, a.replyTo, mail({ from: ANN, subject: "Re: x", text: "", messageId: "<bounds-e@example.com>", quote: "a1" }));
    expect(quoteOnly).toEqual(["the reply has no text above the quoted message"]);
    const auto = mail({ from: ANN, subject: "Out of office", text: "I am away.", messageId: "<bounds-auto@example.com>" });
    expect(await deliver(ANN, a.replyTo, auto, { "Auto-Submitted": "auto-replied" })).toEqual([]);
    expect(await userTexts(a.id)).toHaveLength(1);

    const long = mail({ from: ANN, subject: "Re: x", text: "z".repeat(MAX_MESSAGE_CHARS + 5000), messageId: "<bounds-l@example.com>" });
    expect(await deliver(ANN, a.replyTo, long)).toEqual([]);
    const taken = (await userTexts(a.id))[1]!;
    expect(taken.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(taken).toMatch(/^z+\n\[… the rest of the reply cut\]$/);
    // Over the trigger's max_bytes: refused before it is read, as any mail.
    const huge = mail({ from: ANN, subject: "Re: x", text: "y".repeat(70_000), messageId: "<bounds-h@example.com>" });
    expect((await deliver(ANN, a.replyTo, huge))[0]).toMatch(/accepts at most 65536/);
  });

  it("a mail to a trigger's own address starts a new run whatever In-Reply-To names: replies travel only through the Reply-To", async () => {
    const a = await started("noreply", ["a1"]);
    await script("mail-chat", [{ text: "new" }]);
    const before = await runObjects();
    for (const to of ["support@example.com", HELP]) {
      const raw = mail({
        from: ANN,
        to,
        subject: "Re: x",
        text: "hello",
        messageId: `<noreply-${to}@example.com>`,
        inReplyTo: a.ours,
        references: [a.first, a.ours],
      });
      expect(await deliver(ANN, to, raw)).toEqual([]);
    }
    expect(await runObjects()).toBe(before + 2);
    expect(await userTexts(a.id)).toHaveLength(1);
  });

  it("our own answer mail delivered to one of our triggers (its sender is one of our addresses) starts nothing and bounces nothing, whatever its Message-ID", async () => {
    const a = await started("own", ["a1"]);
    const answer = sent.find((m) => m.to === ANN)!;
    expect((await parseMail(answer)).messageId).toMatch(PLATFORM_ID);
    const before = await runObjects();
    // As Email Routing hands it over: its headers (From: our trigger, Auto-Submitted) read from the message itself.
    for (const to of ["support@example.com", HELP]) expect(await deliver("bounces@cloudflare.example", to, answer.raw.replaceAll(ANN, to))).toEqual([]);
    expect(await runObjects()).toBe(before);
    expect(await userTexts(a.id)).toHaveLength(1);
    // Someone who writes From: our trigger without saying it is automatic is read as any mail (support@ allows *@example.com).
    const human = mail({ from: HELP, to: "support@example.com", subject: "hi", text: "from the desk", messageId: "<own-human@example.com>" });
    expect(await deliver(HELP, "support@example.com", human)).toEqual([]);
    expect(await runObjects()).toBe(before + 1);
    // A From naming our trigger among others is not ours either.
    const several = mail({ from: ANN, to: "support@example.com", subject: "hi", text: "two", messageId: "<own-several@example.com>" });
    expect(await deliver(ANN, "support@example.com", several, { From: `${HELP}, ${ANN}`, "Auto-Submitted": "auto-replied" })).toEqual([]);
    expect(await runObjects()).toBe(before + 2);
  });

  it("CR/LF in the subject or a folded Message-ID adds no header to the answer mail", async () => {
    await script("mail-chat", [{ text: "ok" }]);
    const msg = createMimeMessage();
    msg.setSender(ANN);
    msg.setRecipient(HELP);
    msg.setSubject("Hi\r\nBcc: evil@evil.test\r\nX-Injected: 1");
    msg.setHeader("Message-ID", "<inj@example.com>\r\n\tBcc: evil@evil.test");
    msg.addMessage({ contentType: "text/plain", data: "hello" });
    expect(await deliver(ANN, HELP, msg.asRaw())).toEqual([]);
    // The run's id comes from the Message-ID as postal-mime reads it.
    const parsedFirst = await parseMail({ from: ANN, to: HELP, raw: msg.asRaw() });
    const id = await runIdOf(ANN, parsedFirst.messageId!);
    await settle(id);
    const answer = sent.filter((m) => m.to === ANN).at(-1)!;
    const head = answer.raw.split("\r\n\r\n")[0]!;
    expect(head).not.toMatch(/^(bcc|x-injected):/im);
    const parsed = await parseMail(answer);
    expect(parsed.subject).not.toMatch(/[\r\n]/);
    expect(parsed.subject).toMatch(/^Re: Hi +Bcc: evil@evil\.test +X-Injected: 1$/);
    expect(parsed.inReplyTo ?? "").not.toMatch(/\s/);
  });

  it("without the send binding or APPROVAL_SECRET no answer is mailed, a warning once, and the conversation goes on", async () => {
    const a = await started("nomail", ["a1", "a2", "a3"]);
    // This object's outbox sees a deployment without mail (its host's env; the app's secret still checks replies).
    await runInDurableObject(env.RUNS.getByName(a.id), (instance) => {
      const { answers } = (instance as unknown as { parts: { answers: { host: { env: Env } } } }).parts;
      answers.host = { ...answers.host, env: { ...answers.host.env, APPROVAL_EMAIL: undefined as never } };
    });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const before = sent.length;
    for (const n of [2, 3]) {
      expect(await deliver(ANN, a.replyTo, mail({ from: ANN, subject: "Re: x", text: `m${n}`, messageId: `<nomail-${n}@example.com>` }))).toEqual([]);
      expect(await settle(a.id)).toMatchObject({ status: "succeeded", output: `a${n}` });
    }
    expect(sent.length).toBe(before);
    const warnings = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes("answers to email conversations are not mailed"));
    expect(warnings).toEqual(["edgework: answers to email conversations are not mailed (missing the APPROVAL_EMAIL send_email binding)"]);
  });

  it("without APPROVAL_REPLY_DOMAIN answers go out without a Reply-To (nothing to continue them through), with a warning once", async () => {
    const a = await started("noreplydomain", ["a1", "a2"]);
    await runInDurableObject(env.RUNS.getByName(a.id), (instance) => {
      const { answers } = (instance as unknown as { parts: { answers: { host: { env: Env } } } }).parts;
      answers.host = { ...answers.host, env: { ...answers.host.env, APPROVAL_REPLY_DOMAIN: undefined } };
    });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(await deliver(ANN, a.replyTo, mail({ from: ANN, subject: "Re: x", text: "m2", messageId: "<noreplydomain-2@example.com>" }))).toEqual([]);
    expect(await settle(a.id)).toMatchObject({ status: "succeeded", output: "a2" });
    const last = (await answersTo(ANN)).at(-1)!.parsed;
    expect(last.inReplyTo).toBe("<noreplydomain-2@example.com>");
    expect(last.replyTo).toBeUndefined();
    const warnings = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes("carry no reply address"));
    expect(warnings).toEqual([
      "edgework: answers to email conversations carry no reply address (APPROVAL_REPLY_DOMAIN is not set): a reply starts a new conversation",
    ]);
  });

  it("a send the binding refuses for a passing reason is retried by the run's alarm, and sent once", async () => {
    const deliverMail = vi.mocked(mailer.deliver);
    const passThrough = deliverMail.getMockImplementation()!;
    let refuse = true;
    deliverMail.mockImplementation(async (binding, m) => {
      if (refuse && m.to === "retry@example.com") throw new Error("binding down");
      return passThrough(binding, m);
    });
    await script("mail-chat", [{ text: "a1" }]);
    const first = "<retry-1@example.com>";
    expect(await deliver("retry@example.com", HELP, mail({ from: "retry@example.com", subject: "R", text: "hi", messageId: first }))).toEqual([]);
    const id = await runIdOf("retry@example.com", first);
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    expect(sent.filter((m) => m.to === "retry@example.com")).toHaveLength(0);
    const events = async () => (await stub(id).eventsSince("0-0", 500))!.events;
    expect((await events()).find((e) => e.type === "answer_email_failed")?.data).toEqual({
      message: 1,
      error: "the send failed: binding down",
      code: "E_UNKNOWN",
      retry: true,
    });
    refuse = false;
    // Not before its retry is due; then once, however often the alarm runs.
    await runAlarm(id);
    expect(sent.filter((m) => m.to === "retry@example.com")).toHaveLength(0);
    await stub(id).advanceClock(61_000);
    await runAlarm(id);
    await runAlarm(id);
    expect(sent.filter((m) => m.to === "retry@example.com")).toHaveLength(1);
    expect((await events()).filter((e) => e.type === "answer_emailed")).toHaveLength(1);
    expect((await stub(id).status())!.answer_email_failures).toEqual([]);
  });

  it("a send refused for a lasting reason is given up at once, its reason on the run and its page", async () => {
    vi.mocked(mailer.deliver).mockRejectedValueOnce(Object.assign(new Error("no"), { code: "E_RECIPIENT_SUPPRESSED" }));
    await script("mail-chat", [{ text: "a1" }]);
    const first = "<lasting-1@example.com>";
    expect(await deliver(ANN, HELP, mail({ from: ANN, subject: "L", text: "hi", messageId: first }))).toEqual([]);
    const id = await runIdOf(ANN, first);
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    const reason = "the recipient is on the suppression list (an earlier message bounced or was reported as spam)";
    const failed = (await stub(id).eventsSince("0-0", 500))!.events.filter((e) => e.type === "answer_email_failed");
    expect(failed.map((e) => e.data)).toEqual([{ message: 1, error: reason, code: "E_RECIPIENT_SUPPRESSED", retry: false }]);
    expect((await stub(id).status())!.answer_email_failures).toEqual([{ message: 1, reason, code: "E_RECIPIENT_SUPPRESSED", at: expect.any(Number) }]);
    await stub(id).advanceClock(3_600_000);
    await runAlarm(id);
    expect(sent.filter((m) => m.to === ANN && m.raw.includes(first))).toHaveLength(0);
    const page = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}/view`, { headers: { Authorization: "Bearer test-token" } }));
    expect(await page.text()).toContain(`email not delivered: ${reason} (answer 1)`);
  });
});

describe("attacks on a conversation by mail", () => {
  it("a reply whose From names the sender but whose envelope is another allowed address is refused", async () => {
    const a = await started("spoof", ["a1", "a2"]);
    // Bob (allowed: *@example.com) writes From: Ann; Email Routing authenticated only his envelope.
    const spoofed = mail({ from: ANN, subject: "Re: x", text: "send me her invoices", messageId: "<spoof-r@example.com>" });
    const rejects = await deliver("bob@example.com", a.replyTo, spoofed);
    expect(rejects).toEqual([expect.stringContaining("envelope sender")]);
    expect(await userTexts(a.id)).toHaveLength(1);
  });

  it("a first mail whose From differs from its envelope starts no conversation (its answer would go to someone who did not write)", async () => {
    await script("mail-chat", [{ text: "a1" }]);
    const before = await runObjects();
    const first = "<spoof-first@example.com>";
    const rejects = await deliver("bob@example.com", HELP, mail({ from: "cat@example.com", subject: "Hi", text: "hello", messageId: first }));
    expect(rejects).toEqual([expect.stringContaining("envelope sender")]);
    expect(await runObjects()).toBe(before);
    expect(sent.filter((m) => m.to === "cat@example.com")).toHaveLength(0);
  });

  it("an answer claimed for sending by an activation that died before the send's outcome is not lost silently: an event says so, once", async () => {
    vi.mocked(mailer.deliver).mockImplementation(async (_binding, m) => {
      if (m.to === "crash@example.com") throw new Error("binding down");
      sent.push(m);
      return undefined;
    });
    await script("mail-chat", [{ text: "a1" }]);
    const first = "<crash-1@example.com>";
    expect(await deliver("crash@example.com", HELP, mail({ from: "crash@example.com", subject: "C", text: "hi", messageId: first }))).toEqual([]);
    const id = await runIdOf("crash@example.com", first);
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    // The retry is claimed as sendDue claims it (durably), then the isolate dies before the send returns.
    await runInDurableObject(env.RUNS.getByName(id), (_instance, state) => {
      state.storage.sql.exec("UPDATE answer_mail SET sent_at = due_at, attempts = attempts + 1");
    });
    await stub(id).advanceClock(61_000);
    await runAlarm(id);
    await runAlarm(id);
    const failed = (await stub(id).eventsSince("0-0", 500))!.events.filter((e) => e.type === "answer_email_failed");
    expect(failed.map((e) => e.data)).toEqual([
      { message: 1, error: "the send failed: binding down", code: "E_UNKNOWN", retry: true },
      { message: 1, error: expect.stringContaining("may not have been sent"), code: "E_UNKNOWN", retry: false },
    ]);
  });

  it("an approval's reply reference of the run's object is no conversation reference, with or without the prefix", async () => {
    const a = await started("sep", ["a1", "a2"]);
    const objectId = env.RUNS.idFromName(a.id).toString();
    // What an approval's Reply-To of this very run would carry (its MAC's prefix "reply\0"), given the conversation's marker.
    const approvalRef = (await replyReference(objectId, "approval-1", env.APPROVAL_SECRET!))!;
    const before = await runObjects();
    const prefixed = `c${approvalRef}@reply.edgework.test`;
    expect(await deliver(ANN, prefixed, mail({ from: ANN, subject: "Re: x", text: "t", messageId: "<sep-r1@example.com>" }))).toEqual([
      "this reply names no conversation of ours; write a new message to start one",
    ]);
    // The conversation's reference without its marker is an approval's address: it names no approval of the run.
    const bare = `${a.replyTo.slice(1)}`;
    const refused = await deliver(ANN, bare, mail({ from: ANN, subject: "Re: x", text: "yes", messageId: "<sep-r2@example.com>" }));
    expect(refused).toHaveLength(1);
    expect(refused[0]).not.toBe("");
    expect(await runObjects()).toBe(before);
    expect(await userTexts(a.id)).toHaveLength(1);
  });

  it("an auto-responder that marks its reply only with X-Autoreply or X-Autorespond does not continue the conversation (no mail loop with a robot)", async () => {
    const a = await started("robot", ["a1", "a2", "a3"]);
    for (const [k, header] of ["X-Autoreply", "X-Autorespond"].entries()) {
      const auto = mail({ from: ANN, subject: "Re: x", text: "Thank you for your message.", messageId: `<robot-${k}@example.com>` });
      expect(await deliver(ANN, a.replyTo, auto, { [header]: "yes" })).toEqual([]);
    }
    expect(await userTexts(a.id)).toHaveLength(1);
  });

  it("an outcome transaction that rolls back after planning the first answer mail does not leave the alarm querying a table that is not there", async () => {
    await script("mail-chat", [{ text: "a1" }]);
    const first = "<rollback-1@example.com>";
    expect(await deliver(ANN, HELP, mail({ from: ANN, subject: "R", text: "hi", messageId: first }))).toEqual([]);
    const id = await runIdOf(ANN, first);
    await runInDurableObject(env.RUNS.getByName(id), (instance, state) => {
      const { answers } = (instance as unknown as { parts: { answers: { plan(o: unknown): void; clamp(at: number): number } } }).parts;
      // The success's event could not be written (a storage error): the transaction, table and all, rolls back.
      const usage = { requests: 1, inputTokens: 1, outputTokens: 1, costUsd: 0 };
      expect(() =>
        state.storage.transactionSync(() => {
          answers.plan({ status: "succeeded", output: "a1", usage });
          throw new Error("SQLITE_TOOBIG");
        }),
      ).toThrow("SQLITE_TOOBIG");
      expect(answers.clamp(123)).toBe(123);
    });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "a1" });
    expect((await answersTo(ANN)).filter((a) => a.parsed.inReplyTo === first)).toHaveLength(1);
  });

  it("a subject with Unicode line separators adds no header; a reply with thousands of ids in References still goes through its Reply-To", async () => {
    await script("mail-chat", [{ text: "a1" }, { text: "a2" }]);
    const first = "<refs-1@example.com>";
    const subject = "Hi\u2028Bcc: evil@evil.test\u0085X-Injected: 1\u2029";
    expect(await deliver(ANN, HELP, mail({ from: ANN, subject, text: "hello", messageId: first }))).toEqual([]);
    const id = await runIdOf(ANN, first);
    await settle(id);
    const heads = () => sent.filter((m) => m.to === ANN).map((m) => m.raw.split("\r\n\r\n")[0]!);
    const answer = await parseMail(sent.filter((m) => m.to === ANN).at(-1)!);
    // 2,500 foreign ids (about 60 KB, inside the trigger's max_bytes): nothing reads them to route.
    const references = [answer.messageId!, ...Array.from({ length: 2500 }, (_, i) => `<x${i}@example.com>`)];
    const replyTo = answer.replyTo![0]!.address!;
    expect(await deliver(ANN, replyTo, mail({ from: ANN, subject: "Re: x", text: "many refs", messageId: "<refs-r@example.com>", references }))).toEqual([]);
    expect(await userTexts(id)).toEqual([expect.any(String), "many refs"]);
    await settle(id);
    expect(heads()).toHaveLength(2);
    for (const head of heads()) expect(head).not.toMatch(/^(bcc|x-injected):/im);
    expect((await parseMail(sent.filter((m) => m.to === ANN).at(-1)!)).references!.split(/\s+/)).toEqual([first, answer.messageId, "<refs-r@example.com>"]);
  });
});

describe("answer mail headers", () => {
  it(`References keeps the thread's first id and its last ${MAX_REFERENCES - 1}, and drops ids that do not fit a header`, () => {
    const ids = Array.from({ length: 30 }, (_, i) => `<m${i}@example.com>`);
    expect(threadReferences(ids)).toEqual([ids[0], ...ids.slice(-(MAX_REFERENCES - 1))]);
    expect(threadReferences(["<a@b>", "<x y@b>", "<c@d>\r\nBcc: e@f", null, `<${"l".repeat(300)}@b>`, "<e@f>"])).toEqual(["<a@b>", "<e@f>"]);
  });
});

const runAlarm = (id: string) => runDurableObjectAlarm(env.RUNS.getByName(id));
