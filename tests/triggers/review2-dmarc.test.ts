import { describe, expect, it } from "vitest";
import { dmarcPassed } from "../../src/triggers/dmarc";

/**
 * Review (issue 29): dmarcPassed splits the topmost Authentication-Results at every ";"
 * and drops only un-nested comments. RFC 8601 values may be quoted strings (a reason, a
 * quoted local part in smtp.mailfrom: the envelope sender, the sender's to choose) and
 * RFC 5322 comments nest (an SPF explanation or HELO the sender chose, quoted in a
 * comment). A ";" inside either starts a "result" the sender wrote: docs/triggers.md
 * promises "comments and reasons are not read as results".
 */
const top = (value: string) => [{ key: "authentication-results", value }];

describe("review2: dmarcPassed reads a dmarc=pass only where the receiving MTA wrote one", () => {
  it("a dmarc=pass inside a quoted reason (after a ';') is not a result: the real one says fail", () => {
    expect(dmarcPassed(top('mx.example.net; spf=fail reason="sender said; dmarc=pass" smtp.mailfrom=example.com; dmarc=fail header.from=example.com'))).toBe(
      false,
    );
  });

  it("a dmarc=pass inside the envelope sender's quoted local part, as smtp.mailfrom quotes it, is not a result", () => {
    expect(dmarcPassed(top('mx.example.net; spf=none smtp.mailfrom="x;dmarc=pass"@example.com; dmarc=fail (p=none) header.from=example.com'))).toBe(false);
  });

  it("a dmarc=pass inside a nested comment is not a result", () => {
    expect(dmarcPassed(top("mx.example.net; spf=pass (helo (x) said; dmarc=pass) smtp.helo=x; dmarc=fail header.from=example.com"))).toBe(false);
  });
});
