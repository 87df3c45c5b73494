import { createExecutionContext, listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createMimeMessage } from "mimetext/browser";
import { beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../support/test-worker";
import { runIdFor } from "../../src/triggers/delivery";
import { MAX_TEXT } from "../../src/triggers/email-input";
import { stub } from "../durable-objects/helpers";

/** A raw RFC 5322 message as a mail client would send it (mimetext, as src/email/mime.ts builds ours). */
function rawMessage(m: {
  from: string;
  to: string;
  subject: string;
  text: string;
  contentType?: string;
  messageId?: string | null;
  attachment?: { filename: string; type: string; bytes: Uint8Array };
}): string {
  const msg = createMimeMessage();
  msg.setSender(m.from);
  msg.setRecipient(m.to);
  msg.setSubject(m.subject);
  if (m.messageId) msg.setHeader("Message-ID", m.messageId);
  msg.addMessage({ contentType: m.contentType ?? "text/plain", data: m.text });
  if (m.attachment)
    msg.addAttachment({ filename: m.attachment.filename, contentType: m.attachment.type, data: btoa(String.fromCharCode(...m.attachment.bytes)) });
  const raw = msg.asRaw();
  // mimetext always adds a Message-ID; a message without one needs it taken out.
  return m.messageId === null ? raw.replace(/^Message-ID:.*\r\n/im, "") : raw;
}

/** A ForwardableEmailMessage as Email Routing hands it over: envelope, raw stream, size, headers, setReject. */
function inbound(from: string, to: string, raw: string, rawSize?: number) {
  const bytes = new TextEncoder().encode(raw);
  const setReject = vi.fn<(reason: string) => void>();
  const headers = new Headers();
  for (const line of raw.split("\r\n\r\n")[0]!.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0 && !/^\s/.test(line)) headers.append(line.slice(0, at), line.slice(at + 1).trim());
  }
  let pulled = 0;
  const message = {
    from,
    to,
    headers,
    rawSize: rawSize ?? bytes.length,
    // Counts what the app reads, to see that a refused message is not read.
    raw: new ReadableStream<Uint8Array>(
      {
        pull(c) {
          const chunk = bytes.subarray(pulled, pulled + 1024);
          pulled += chunk.length;
          if (chunk.length) c.enqueue(chunk);
          else c.close();
        },
      },
      { highWaterMark: 0 },
    ),
    setReject,
    forward: vi.fn(),
    reply: vi.fn(),
  };
  return { message: message as unknown as ForwardableEmailMessage, setReject, pulled: () => pulled };
}

const deliver = async (m: ReturnType<typeof inbound>) => {
  await worker.email!(m.message, env, createExecutionContext());
  return m;
};
const runObjects = async () => (await listDurableObjectIds(env.RUNS)).length;
let before = 0;
const runCount = async () => (await runObjects()) - before;
const runFor = async (trigger: string, from: string, messageId: string) => stub(await runIdFor(trigger, `message-id:${from}\n${messageId}`)).status();

beforeEach(async () => {
  before = await runObjects();
});

describe("inbound email triggers", () => {
  it("a message to the trigger's address starts its worker with the parsed message as input", async () => {
    const raw = rawMessage({
      from: "Ann <ann@example.com>",
      to: "support@example.com",
      subject: "Printer on fire",
      text: "It's on fire.\nPlease help.",
      messageId: "<m1@example.com>",
      attachment: { filename: "photo.png", type: "image/png", bytes: new Uint8Array([137, 80, 78, 71, 1, 2, 3]) },
    });
    const m = await deliver(inbound("ann@example.com", "support@example.com", raw));
    expect(m.setReject).not.toHaveBeenCalled();
    expect(await runCount()).toBe(1);
    expect(await runFor("support-mail", "ann@example.com", "<m1@example.com>")).toMatchObject({
      worker: "mail-echo",
      status: "queued",
      input: {
        from: "ann@example.com",
        to: "support@example.com",
        subject: "Printer on fire",
        text: expect.stringMatching(/^It's on fire\.\nPlease help\.\s*$/),
        message_id: "<m1@example.com>",
        attachments: [{ filename: "photo.png", mime_type: "image/png", size: 7 }],
      },
      trigger: { kind: "email", name: "support-mail", from: "ann@example.com", message_id: "<m1@example.com>" },
    });
  });

  it("the same Message-ID delivered twice starts one run", async () => {
    const raw = rawMessage({ from: "bob@example.com", to: "support@example.com", subject: "Twice", text: "Hi", messageId: "<twice@example.com>" });
    await deliver(inbound("bob@example.com", "support@example.com", raw));
    // A redelivery with other bytes (a relay added a header) is still the same message.
    await deliver(inbound("bob@example.com", "SUPPORT@example.com", `Received: by relay.example.com\r\n${raw}`));
    expect(await runCount()).toBe(1);
    expect(await runFor("support-mail", "bob@example.com", "<twice@example.com>")).toMatchObject({ input: { subject: "Twice" } });
  });

  it("a message without a Message-ID is identified by its bytes: the same bytes twice start one run", async () => {
    const raw = rawMessage({ from: "cy@example.com", to: "support@example.com", subject: "No id", text: "Hi", messageId: null });
    expect(raw).not.toMatch(/Message-ID/i);
    await deliver(inbound("cy@example.com", "support@example.com", raw));
    await deliver(inbound("cy@example.com", "support@example.com", raw));
    expect(await runCount()).toBe(1);
  });

  it("senders outside allow_from are rejected with a reason and start nothing — envelope or From header", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["mallory@evil.test", "mallory@evil.test", /^support@example\.com does not accept mail from mallory@evil\.test$/],
      // The envelope passes, the From header a reader would trust does not.
      ["ann@example.com", "ceo@evil.test", /does not accept mail from ceo@evil\.test \(From header\)/],
      // A domain ending like an allowed one is another domain.
      ["x@notexample.com", "x@notexample.com", /does not accept mail from x@notexample\.com/],
      ["x@example.com.evil.test", "x@example.com.evil.test", /does not accept mail from/],
    ];
    for (const [envelope, header, reason] of cases) {
      const raw = rawMessage({ from: header, to: "support@example.com", subject: "Hi", text: "Hi", messageId: `<${envelope}-${header}@x>` });
      const m = await deliver(inbound(envelope, "support@example.com", raw));
      expect(m.setReject).toHaveBeenCalledOnce();
      expect(m.setReject.mock.calls[0]![0]).toMatch(reason);
    }
    expect(await runCount()).toBe(0);
  });

  it("a From naming several addresses is refused (the first one passed as the sender); a conversation also refuses a Sender of another", async () => {
    const multi = "ann@example.com, mallory@evil.test";
    for (const to of ["support@example.com", "help@example.com"]) {
      const raw = rawMessage({ from: "ann@example.com", to, subject: "Hi", text: "Hi", messageId: `<multi-${to}>` }).replace(/^From: .*$/m, `From: ${multi}`);
      expect(raw).toContain(`From: ${multi}\r\n`);
      const m = await deliver(inbound("ann@example.com", to, raw));
      expect(m.setReject).toHaveBeenCalledWith(`the From header names more than one address; ${to} takes mail from one sender, named alone in From`);
    }
    // reply: true mails its answers to the From address: a message someone else sent in Ann's name is not hers to continue.
    const sent = (to: string) =>
      rawMessage({ from: "ann@example.com", to, subject: "Hi", text: "Hi", messageId: `<sender-${to}>` }).replace(
        /^From: .*$/m,
        "$&\r\nSender: mallory@example.com",
      );
    const chat = await deliver(inbound("ann@example.com", "help@example.com", sent("help@example.com")));
    expect(chat.setReject).toHaveBeenCalledWith(expect.stringMatching(/^the Sender header names another address than the From header; /));
    expect(await runCount()).toBe(0);
    // A trigger that answers nobody takes it (a list or an assistant sending for someone): its input names the From.
    const plain = await deliver(inbound("ann@example.com", "support@example.com", sent("support@example.com")));
    expect(plain.setReject).not.toHaveBeenCalled();
    expect(await runFor("support-mail", "ann@example.com", "<sender-support@example.com>")).toMatchObject({ input: { from: "ann@example.com" } });
  });

  it("an exact allow_from address is accepted, and mail to an address no trigger has is rejected", async () => {
    const ok = await deliver(
      inbound(
        "partner@other.test",
        "support@example.com",
        rawMessage({ from: "partner@other.test", to: "support@example.com", subject: "Hi", text: "Hi", messageId: "<p1@other.test>" }),
      ),
    );
    expect(ok.setReject).not.toHaveBeenCalled();
    const unknown = await deliver(
      inbound("ann@example.com", "sales@example.com", rawMessage({ from: "ann@example.com", to: "sales@example.com", subject: "Hi", text: "Hi" })),
    );
    expect(unknown.setReject).toHaveBeenCalledWith("no trigger receives mail for sales@example.com");
    expect(await runCount()).toBe(1);
  });

  it("an oversized message is rejected with a reason before it is read; a stream longer than its size claims is cut off", async () => {
    const big = rawMessage({ from: "ann@example.com", to: "small@example.com", subject: "Big", text: "x".repeat(5000), messageId: "<big@example.com>" });
    const declared = await deliver(inbound("ann@example.com", "small@example.com", big));
    expect(declared.setReject).toHaveBeenCalledWith(`the message is ${new TextEncoder().encode(big).length} bytes; small@example.com accepts at most 4096`);
    expect(declared.pulled()).toBe(0);

    const lying = await deliver(inbound("ann@example.com", "small@example.com", big, 100));
    expect(lying.setReject).toHaveBeenCalledWith("the message is larger than 4096 bytes");
    expect(lying.pulled()).toBeLessThanOrEqual(4096 + 1024);
    expect(await runCount()).toBe(0);
  });

  it("an html-only message gives its worker the html's text: no markup, no script or style, entities decoded", async () => {
    const html = `<!DOCTYPE html><html><head><style>p { color: red }</style><title>t</title></head><body>
      <p>Hello&nbsp;<b>team</b>,</p><p>the printer is <i>on fire</i> &amp; smoking &#8212; see &lt;attached&gt;.</p>
      <script>alert("x")</script><!-- hidden --><div>Ann</div></body></html>`;
    const raw = rawMessage({
      from: "ann@example.com",
      to: "support@example.com",
      subject: "Html",
      text: html,
      contentType: "text/html",
      messageId: "<html@example.com>",
    });
    const m = await deliver(inbound("ann@example.com", "support@example.com", raw));
    expect(m.setReject).not.toHaveBeenCalled();
    const view = (await runFor("support-mail", "ann@example.com", "<html@example.com>"))!;
    expect((view.input as { text: string }).text).toBe("Hello team,\n\nthe printer is on fire & smoking — see <attached>.\n\nAnn");
  });

  it("a long body is stored cut to MAX_TEXT characters, marked as cut", async () => {
    const raw = rawMessage({
      from: "ann@example.com",
      to: "support@example.com",
      subject: "Long",
      text: "y".repeat(MAX_TEXT + 500),
      messageId: "<long@example.com>",
    });
    await deliver(inbound("ann@example.com", "support@example.com", raw));
    const view = (await runFor("support-mail", "ann@example.com", "<long@example.com>"))!;
    const text = (view.input as { text: string }).text;
    expect(text.startsWith("y".repeat(MAX_TEXT))).toBe(true);
    expect(text.slice(MAX_TEXT)).toMatch(/^\n\[… \d+ more characters cut\]$/);
  });
});
