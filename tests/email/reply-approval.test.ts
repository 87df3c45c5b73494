import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { parseReplyDecision } from "../../src/email/reply-approval";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, deliver, parseMail, replyTo } from "./support";

const auth = { Authorization: "Bearer test-token" };
const APPROVER = "approver@example.com";

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** A pause-writer run paused at its approval; its approval email parsed. */
async function pausedRun(tag: string, after: unknown[]) {
  await script("pause-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST", body: "x" } }] }, ...after]);
  const res = await exports.default.fetch(
    new Request("https://edgework.test/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "pause-writer", input: "post it" }),
    }),
  );
  const { id } = (await res.json()) as { id: string };
  expect((await settle(id)).status).toBe("awaiting_approval");
  const mail = await parseMail(sent.at(-1)!);
  const address = mail.replyTo?.[0]?.address;
  if (!address) throw new Error("the approval email has no Reply-To");
  return { id, mail, address };
}

describe("approve by replying", () => {
  it("the Reply-To is a 63-character lowercase local part on the reply domain, and the email says how to reply", async () => {
    const { mail, address } = await pausedRun("reply-shape", [{ text: "done" }]);
    const [local, domain] = address.split("@");
    expect(domain).toBe("reply.edgework.test");
    expect(local).toMatch(/^[a-z2-7]{63}$/);
    expect(mail.text).toContain('reply to this email with "yes" or "no" on the first line');
  });

  it('"Yes, go ahead" above the quoted original approves, with the note; the run resumes to completion', async () => {
    const { id, mail, address } = await pausedRun("reply-yes", [{ text: "posted" }]);
    // Mail systems may upper-case the local part: the reference is case-insensitive.
    expect(await deliver(APPROVER, address.toUpperCase(), replyTo(mail, APPROVER, address, "Yes, go ahead"))).toEqual([]);
    const done = await settle(id);
    expect(done).toMatchObject({
      status: "succeeded",
      output: "posted",
      approvals: [{ status: "approved", note: "go ahead", decided_by: `email reply (${APPROVER})` }],
    });
    expect(await effectCount("reply-yes")).toBe(1);
  });

  it('"no — wrong repo" rejects with the note; the model is told', async () => {
    const { id, mail, address } = await pausedRun("reply-no", [{ text: "ok, not posting" }]);
    expect(await deliver(APPROVER, address, replyTo(mail, "Approver@Example.com", address, "no — wrong repo"))).toEqual([]);
    expect(await settle(id)).toMatchObject({ status: "succeeded", approvals: [{ status: "rejected", note: "wrong repo" }] });
    const last = (await modelRequests("pause-writer")).at(-1) as { messages: Array<{ content: string }> };
    expect(last.messages.at(-1)!.content).toBe(`Error: the call to fx_fetch was rejected by email reply (${APPROVER}): wrong repo`);
    expect(await effectCount("reply-no")).toBe(0);
  });

  it("refuses, changing nothing: another sender, a forged From, a tampered reference, no decision line, an oversized reply", async () => {
    const { id, mail, address } = await pausedRun("reply-refused", [{ text: "never" }]);
    const before = await stub(id).status();
    const [local, domain] = address.split("@") as [string, string];
    const tampered = `${local.slice(0, -1)}${local.endsWith("a") ? "b" : "a"}@${domain}`;
    const cases: Array<[string, string[]]> = [
      ["other sender", await deliver("mallory@example.com", address, replyTo(mail, "mallory@example.com", address, "yes"))],
      ["From header differs", await deliver("mallory@example.com", address, replyTo(mail, APPROVER, address, "yes"))],
      ["tampered reference", await deliver(APPROVER, tampered, replyTo(mail, APPROVER, tampered, "yes"))],
      ["not a reference", await deliver(APPROVER, `hello@${domain}`, replyTo(mail, APPROVER, `hello@${domain}`, "yes"))],
      ["no decision", await deliver(APPROVER, address, replyTo(mail, APPROVER, address, "yesterday I thought so"))],
      ["only a quote", await deliver(APPROVER, address, replyTo(mail, APPROVER, address, ""))],
      ["oversized", await deliver(APPROVER, address, replyTo(mail, APPROVER, address, `yes ${"x".repeat(300_000)}`))],
    ];
    expect(cases.map(([name, r]) => [name, r.length])).toEqual(cases.map(([name]) => [name, 1]));
    expect(cases[0]![1][0]).toContain("does not come from an address this approval was emailed to");
    expect(cases[2]![1][0]).toContain("names no approval");
    expect(cases[4]![1][0]).toContain("no decision found");
    expect(cases[6]![1][0]).toContain("too large");
    // An out-of-office answer is dropped without a bounce (no loops), and decides nothing.
    expect(await deliver(APPROVER, address, replyTo(mail, APPROVER, address, "yes"), { "Auto-Submitted": "auto-replied" })).toEqual([]);
    expect(await stub(id).status()).toEqual(before);
  });

  it("refuses, changing nothing, a reply whose From header is missing, empty, unparsable, names another address or several; the reason is logged", async () => {
    const { id, mail, address } = await pausedRun("reply-no-from", [{ text: "never" }]);
    const before = await stub(id).status();
    const warn = vi.spyOn(console, "warn");
    const good = replyTo(mail, APPROVER, address, "yes");
    // The same reply with its From header line replaced (or removed).
    const withFrom = (line: string | null) => good.replace(/^From: .*\r?\n/m, line === null ? "" : `${line}\r\n`);
    expect(withFrom(null)).not.toMatch(/^From:/m);
    const cases: Array<[string, string | null]> = [
      ["no From", null],
      ["empty From", "From: "],
      ["empty address", "From: <>"],
      ["a name only", "From: Approver"],
      ["a group", "From: undisclosed-recipients:;"],
      ["another address", "From: mallory@example.com"],
      // The approver's address first, another after it: postal-mime reads only the first.
      ["two addresses", `From: ${APPROVER}, mallory@example.com`],
      ["a second From header", `From: ${APPROVER}\r\nFrom: mallory@example.com`],
      ["sent by another", `From: ${APPROVER}\r\nSender: mallory@example.com`],
    ];
    for (const [name, line] of cases) {
      const rejects = await deliver(APPROVER, address, withFrom(line));
      expect([name, rejects.length]).toEqual([name, 1]);
      expect(rejects[0]).toMatch(/From header/);
    }
    expect(await stub(id).status()).toEqual(before);
    expect(await effectCount("reply-no-from")).toBe(0);
    const logged = warn.mock.calls.map((c) => c.join(" ")).filter((l) => l.startsWith("approval reply refused"));
    expect(logged).toHaveLength(cases.length);
    // Neither the reply address (it carries the signed reference) nor the sender is logged.
    for (const line of logged) expect(line).not.toMatch(new RegExp(`${address.split("@")[0]}|${APPROVER}|mallory`, "i"));
    // The same reply with its From intact still decides.
    expect(await deliver(APPROVER, address, good)).toEqual([]);
    expect((await settle(id)).approvals[0]).toMatchObject({ status: "approved" });
  });

  it("a second reply, and a reply after expiry, are refused", async () => {
    const first = await pausedRun("reply-twice", [{ text: "posted" }]);
    expect(await deliver(APPROVER, first.address, replyTo(first.mail, APPROVER, first.address, "ok"))).toEqual([]);
    const second = await deliver(APPROVER, first.address, replyTo(first.mail, APPROVER, first.address, "no, wait"));
    expect(second).toEqual(["approval already approved"]);
    expect(await settle(first.id)).toMatchObject({ status: "succeeded", approvals: [{ status: "approved" }] });
    expect(await effectCount("reply-twice")).toBe(1);

    const late = await pausedRun("reply-late", [{ text: "too late" }]);
    await runInDurableObject(env.RUNS.getByName(late.id), (_o, state) => state.storage.sql.exec("UPDATE approvals SET expires_at = ?", Date.now() - 1));
    expect(await deliver(APPROVER, late.address, replyTo(late.mail, APPROVER, late.address, "yes"))).toEqual([
      "the approval expired; it counts as a rejection",
    ]);
    expect((await settle(late.id)).approvals[0]).toMatchObject({ status: "expired" });
    expect(await effectCount("reply-late")).toBe(0);
  });
});

describe("parseReplyDecision", () => {
  it("reads the first line that is not empty, quoted or the attribution; word boundary; bounded note", () => {
    expect(parseReplyDecision("\n\nYES\n> approve")).toEqual({ decision: "approve" });
    expect(parseReplyDecision("> no\nOn Mon, Jan 1, 2026 at 9:00 AM Bob <b@x> wrote:\nApprove: fine by me")).toEqual({
      decision: "approve",
      note: "fine by me",
    });
    expect(parseReplyDecision("Reject. Wrong repo\nsecond line")).toEqual({ decision: "reject", note: "Wrong repo" });
    expect(parseReplyDecision("okay")).toBeNull();
    expect(parseReplyDecision("nope")).toBeNull();
    expect(parseReplyDecision("I think yes")).toBeNull();
    expect(parseReplyDecision("")).toBeNull();
    expect(parseReplyDecision(`no ${"n".repeat(5000)}`)!.note!.length).toBe(500);
  });
});
