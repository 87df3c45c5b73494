import { describe, expect, it } from "vitest";
import { MAX_LINE } from "../../src/triggers/flow/config";
import { stub } from "../durable-objects/helpers";
import { deliver, issueBody, keyOf, runOf } from "./support";

describe("a flow delivery is hostile input", () => {
  it("a payload without a key value is refused (400) naming the pointer; one with an object, an array or a long string there too; nothing is recorded", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ repository: { full_name: "octo/flow" }, issue: { title: "t" }, seq: 1 }, /key: \/issue\/number is missing from the payload/],
      [{ repository: { full_name: "octo/flow" }, issue: { number: null, title: "t" }, seq: 1 }, /\/issue\/number is missing/],
      [{ repository: { full_name: { evil: true } }, issue: { number: 1, title: "t" }, seq: 1 }, /\/repository\/full_name is an object/],
      [{ repository: { full_name: ["a"] }, issue: { number: 1, title: "t" }, seq: 1 }, /\/repository\/full_name is an array/],
      [{ repository: { full_name: "x".repeat(300) }, issue: { number: 1, title: "t" }, seq: 1 }, /300 characters, over 256/],
    ];
    for (const [payload, error] of cases) {
      const res = await deliver("flow-queue", JSON.stringify(payload));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(error);
    }
  });

  it("on_busy: message refuses an input too long for a message (413), whether or not it would start the run", async () => {
    const long = issueBody(401, 1, "t".repeat(17_000));
    const res = await deliver("flow-message", long);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/as a message is \d+ characters, over 16000/);
    expect(await stub(await runOf("flow-message", long)).status()).toBeNull();
  });

  it("on_busy: {event} refuses an input over an event's 64 KiB (413)", async () => {
    const res = await deliver("flow-event", issueBody(402, 1, "t".repeat(70_000)));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/as the event issue_updated: the payload is \d+ bytes/);
  });

  it(`a key's line holds ${MAX_LINE} deliveries; one more is refused with 429 and Retry-After, nothing recorded`, { timeout: 120_000 }, async () => {
    const issue = 403;
    expect((await deliver("flow-queue", issueBody(issue, 0))).body).toMatchObject({ started: true });
    for (let seq = 1; seq <= MAX_LINE; seq++) expect((await deliver("flow-queue", issueBody(issue, seq), null)).body).toEqual({ queued: true, position: seq });
    const full = await deliver("flow-queue", issueBody(issue, MAX_LINE + 1), null);
    expect(full.status).toBe(429);
    expect(full.body).toMatchObject({ error: expect.stringContaining("line is full"), retry_after: 60 });
    expect((await (await keyOf("flow-queue", issue)).tables()).line).toBe(MAX_LINE);
  });
});
