import PostalMime from "postal-mime";
import { describe, expect, it } from "vitest";
import { buildMime } from "../../src/email/mime";

const base = { from: "bot@edgework.test", to: "ann@example.com", subject: "Hi", text: "plain", html: "<p>html</p>" };
const headersOf = (raw: string) => raw.slice(0, raw.indexOf("\r\n\r\n")).split(/\r\n(?![ \t])/);

describe("buildMime", () => {
  it("writes a multipart/alternative message a mail parser reads back: encoded subject and name, both parts, a Message-ID on the sender's domain", async () => {
    const subject = `Approve → write_file? “${"long ".repeat(40)}” ✓`;
    const raw = buildMime({ ...base, fromName: "Édgework bot", replyTo: "r+tok@reply.edgework.test", subject, text: "ünïcode → text", html: "<b>→</b>" });
    const mail = await PostalMime.parse(raw);
    expect(mail.subject).toBe(subject);
    expect(mail.from).toMatchObject({ name: "Édgework bot", address: "bot@edgework.test" });
    expect(mail.to?.[0]?.address).toBe("ann@example.com");
    expect(mail.replyTo?.[0]?.address).toBe("r+tok@reply.edgework.test");
    expect(mail.text?.trim()).toBe("ünïcode → text");
    expect(mail.html?.trim()).toBe("<b>→</b>");
    expect(mail.messageId).toMatch(/^<[0-9a-f]{32}@edgework\.test>$/);
    // Every line within RFC 5322's 998 characters (the long subject is folded), every line ending CRLF.
    expect(raw.split("\r\n").every((line) => line.length <= 998 && !line.includes("\n"))).toBe(true);
  });

  it("keeps a Message-ID given in headers (one only), writes no From name when it is empty", () => {
    const raw = buildMime({ ...base, fromName: "", headers: { "Message-ID": "<own@edgework.test>", References: "<a@x>\r\n <b@x>" } });
    const headers = headersOf(raw);
    expect(headers.filter((h) => /^message-id:/i.test(h))).toEqual(["Message-ID: <own@edgework.test>"]);
    expect(headers).toContain("From: <bot@edgework.test>");
    expect(headers).toContain("References: <a@x>\r\n <b@x>");
  });

  it("refuses an address or a header value that would add a header or a second recipient", () => {
    expect(() => buildMime({ ...base, to: "ann@example.com\r\nBcc: eve@example.com" })).toThrow(/To: not a plain address/);
    expect(() => buildMime({ ...base, to: "ann@example.com, eve@example.com" })).toThrow(/To: not a plain address/);
    expect(() => buildMime({ ...base, replyTo: "Eve <eve@example.com>" })).toThrow(/Reply-To: not a plain address/);
    expect(() => buildMime({ ...base, headers: { "In-Reply-To": "<a@x>\r\nBcc: eve@example.com" } })).toThrow(/header "In-Reply-To": not a single header line/);
    expect(() => buildMime({ ...base, headers: { "Bad Name": "x" } })).toThrow(/not a single header line/);
  });

  it("a subject with CR or LF adds no header", async () => {
    const raw = buildMime({ ...base, subject: "Hi\r\nBcc: eve@example.com" });
    expect(headersOf(raw).some((h) => /^bcc:/i.test(h))).toBe(false);
    expect((await PostalMime.parse(raw)).subject).toContain("Bcc: eve@example.com");
  });
});
