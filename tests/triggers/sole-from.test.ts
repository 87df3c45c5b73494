import PostalMime from "postal-mime";
import { describe, expect, it } from "vitest";
import { soleFrom } from "../../src/triggers/sole-from";

/** The headers of a message with these header lines, as postal-mime reads them. */
const headersOf = async (...lines: string[]) => (await PostalMime.parse(`${lines.join("\r\n")}\r\nSubject: s\r\n\r\nbody`)).headers;
const fromOf = async (...lines: string[]) => soleFrom(await headersOf(...lines));

describe("soleFrom: the one address a From header names", () => {
  it("one mailbox, however it is written", async () => {
    for (const from of [
      "ann@example.com",
      "Ann <Ann@Example.com>",
      '"Doe, Ann" <ann@example.com>',
      "=?utf-8?B?QW5u?= <ann@example.com>",
      '"ann@example.com" <ann@example.com>',
      "Ann @ Work <ann@example.com>",
      "ann@example.com,",
    ])
      expect([from, await fromOf(`From: ${from}`)]).toEqual([from, { address: "ann@example.com" }]);
  });

  it("several addresses are refused, wherever the second one hides (postal-mime reads only the first)", async () => {
    for (const from of [
      "ann@example.com, mallory@evil.test",
      "Ann <ann@example.com>, Mallory <mallory@evil.test>",
      "ann@example.com; mallory@evil.test",
      "<ann@example.com> <mallory@evil.test>",
      "ann@example.com mallory@evil.test",
      '"mallory@evil.test" <ann@example.com>',
      "=?utf-8?Q?mallory=40evil.test?= <ann@example.com>",
      "Ann <ann@example.com> (mallory@evil.test)",
    ])
      expect([from, await fromOf(`From: ${from}`)]).toEqual([from, { problem: "the From header names more than one address" }]);
  });

  it("two From headers, a group, or no address at all are refused", async () => {
    expect(await fromOf("From: ann@example.com", "From: mallory@evil.test")).toEqual({ problem: "the message has 2 From headers; it may have one" });
    for (const group of ["Team: ann@example.com;", "undisclosed-recipients:;"])
      expect(await fromOf(`From: ${group}`)).toEqual({ problem: "the From header names a group, not one address" });
    for (const none of [[], ["From: "], ["From: <>"], ["From: Ann"]]) expect(await fromOf(...none)).toEqual({ problem: "the From header names no address" });
  });

  it("with `sender`: a Sender header must name the From address", async () => {
    const headers = async (sender: string) => headersOf("From: Ann <ann@example.com>", `Sender: ${sender}`);
    expect(soleFrom(await headers("ANN@example.com"), { sender: true })).toEqual({ address: "ann@example.com" });
    expect(soleFrom(await headers("mallory@evil.test"), { sender: true })).toEqual({ problem: "the Sender header names another address than the From header" });
    expect(soleFrom(await headers("ann@example.com, mallory@evil.test"), { sender: true })).toEqual({
      problem: "the Sender header names more than one address",
    });
    // Without `sender` (a trigger that does not answer): the Sender is not looked at.
    expect(soleFrom(await headers("mallory@evil.test"))).toEqual({ address: "ann@example.com" });
  });
});
