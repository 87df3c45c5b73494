import PostalMime from "postal-mime";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { dmarcPassed } from "../../src/triggers/dmarc";
import { receiveEmail } from "../../src/triggers/inbound-email";
import type { EmailTrigger } from "../../src/triggers/triggers-file";

const h = (...values: string[]) => values.map((value) => ({ key: "authentication-results", value }));

describe("dmarcPassed: the receiving MTA's verdict, from the topmost Authentication-Results only", () => {
  it("passes on dmarc=pass in the topmost header, whatever its other results", () => {
    expect(dmarcPassed(h("mx.cloudflare.net; spf=pass smtp.mailfrom=example.com; dkim=pass header.d=example.com; dmarc=pass header.from=example.com"))).toBe(
      true,
    );
    expect(dmarcPassed(h("mx.example.net 1; DMARC = Pass (p=none) header.from=example.com"))).toBe(true);
  });

  it("a forged dmarc=pass below the receiving MTA's header counts for nothing", () => {
    // The sender wrote the second header; the receiving MTA added the first, above it.
    expect(dmarcPassed(h("mx.cloudflare.net; dmarc=fail (p=none) header.from=example.com", "mx.cloudflare.net; dmarc=pass header.from=example.com"))).toBe(
      false,
    );
    expect(dmarcPassed(h("mx.cloudflare.net; dmarc=none", "forged; dmarc=pass"))).toBe(false);
  });

  it("no header, no dmarc result, a pass only in a comment, reason or the authserv-id: not a pass", () => {
    expect(dmarcPassed([])).toBe(false);
    expect(dmarcPassed([{ key: "received", value: "from x; dmarc=pass" }])).toBe(false);
    expect(dmarcPassed(h("mx.example.net; none"))).toBe(false);
    expect(dmarcPassed(h("mx.example.net; spf=pass (dmarc=pass); dkim=fail"))).toBe(false);
    expect(dmarcPassed(h('mx.example.net; spf=pass reason="dmarc=pass"'))).toBe(false);
    expect(dmarcPassed(h("dmarc=pass; spf=pass"))).toBe(false);
    expect(dmarcPassed(h(`mx.example.net; ${"x=y; ".repeat(1000)}dmarc=pass`))).toBe(false);
  });
});

describe("an email trigger with require_dmarc", () => {
  const trigger = (require_dmarc: boolean): EmailTrigger =>
    ({
      name: "dm",
      worker: "nonexistent-worker",
      email: { to: "dm@edgework.test", allow_from: ["*@example.com"], max_bytes: 65536, reply: true, require_dmarc },
      approval_mode: "ask",
    }) as EmailTrigger;
  const message = (authResults: string[]) => {
    const raw = [
      ...authResults.map((v) => `Authentication-Results: ${v}`),
      "From: ann@example.com",
      "To: dm@edgework.test",
      "Subject: hi",
      "Message-ID: <m1@example.com>",
      "",
      "hello",
      "",
    ].join("\r\n");
    const bytes = new TextEncoder().encode(raw);
    return {
      from: "ann@example.com",
      to: "dm@edgework.test",
      headers: new Headers(),
      rawSize: bytes.length,
      raw: new Blob([bytes]).stream(),
      setReject: vi.fn(),
    };
  };

  it("refuses a message whose topmost header is not a pass, even with a forged pass below it, saying why", async () => {
    const forged = message(["mx.cloudflare.net; dmarc=fail", "mx.cloudflare.net; dmarc=pass"]);
    expect(await receiveEmail(env, forged, [trigger(true)])).toEqual({
      rejected: "dm@edgework.test accepts only mail whose receiving server reports dmarc=pass (its topmost Authentication-Results header)",
    });
    expect(await receiveEmail(env, message([]), [trigger(true)])).toMatchObject({ rejected: expect.stringMatching(/dmarc=pass/) });
  });

  it("lets a passing message through to the next check (here: the unknown worker), and does not look without the option", async () => {
    const passing = await receiveEmail(env, message(["mx.cloudflare.net; dmarc=pass"]), [trigger(true)]);
    expect(passing).toMatchObject({ rejected: expect.not.stringMatching(/dmarc/) });
    const unchecked = await receiveEmail(env, message(["mx.cloudflare.net; dmarc=fail"]), [trigger(false)]);
    expect(unchecked).toMatchObject({ rejected: expect.not.stringMatching(/dmarc/) });
  });

  it("postal-mime keeps headers in message order, top first (what the check relies on)", async () => {
    const parsed = await PostalMime.parse("Authentication-Results: a; dmarc=fail\r\nAuthentication-Results: b; dmarc=pass\r\nFrom: x@example.com\r\n\r\nhi");
    expect(parsed.headers.filter((x) => x.key === "authentication-results").map((x) => x.value)).toEqual(["a; dmarc=fail", "b; dmarc=pass"]);
  });
});
