import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import { sendFailure } from "../../src/email/send-failure";
import { allowedRecipient, asProductionSends, RecipientNotAllowed } from "../../src/email/strict-local";
import { effectCount, effectUrl, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, parseMail } from "./support";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));
const NOT_ALLOWED =
  "the recipient is not a verified destination address of the account, or the send_email binding does not allow it: verify it in Email Routing, or onboard the sending domain to Email Sending";

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

const object = (id: string) => env.RUNS.getByName(id);
const alarmAt = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());
const typesOf = async (id: string) => (await stub(id).eventsSince("0-0", 500))!.events.map((e) => e.type);

/** Starts `worker` on one POST that asks for approval; runs exactly one activation. */
async function startPosting(worker: string, id: string) {
  await script(worker, [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "x" } }] }, { text: "posted" }]);
  await stub(id).start({ id, worker, input: { input: "post it" }, approvalMode: "ask", budget: {} });
  await runDurableObjectAlarm(object(id));
}

describe("strict local mode: mail as production sends it", () => {
  it("an approval whose approver the deployment may not mail pauses the run in one activation, the refusal recorded and final; decidable by API", async () => {
    const log = vi.spyOn(console, "log");
    await startPosting("unverified-writer", "strict-unverified");
    // Its log line: the code, never the address nor the reason's text.
    const line = log.mock.calls.map((c) => String(c[0])).find((l) => l.includes('"approval_email_failed"'))!;
    expect(JSON.parse(line)).toMatchObject({ edgework: "approval_email_failed", kind: "request", code: "E_RECIPIENT_NOT_ALLOWED", retry: false });
    expect(line).not.toContain("@");
    const view = (await stub("strict-unverified").status())!;
    expect(view.status).toBe("awaiting_approval");
    const [approval] = view.approvals;
    expect(approval!.email_failures).toEqual([
      {
        kind: "request",
        to: "approver@unverified.test",
        reason: NOT_ALLOWED,
        code: "E_RECIPIENT_NOT_ALLOWED",
        retrying: false,
        attempts: 1,
        at: expect.any(Number),
      },
    ]);
    expect(sent).toEqual([]);
    // The notification step records the outcome: a replay neither sends nor fails again.
    const notified = (await stub("strict-unverified").eventsSince("0-0", 500))!.events.find((e) => e.type === "approval_notified");
    expect(notified?.data).toMatchObject({
      emailed: false,
      to: "",
      not_delivered: [{ to: "approver@unverified.test", error: NOT_ALLOWED, code: "E_RECIPIENT_NOT_ALLOWED", retry: false }],
    });
    const steps = (await stub("strict-unverified").journalSteps(0, 100))!.steps;
    expect(steps.filter((s) => s.kind === "notify")).toHaveLength(1);
    // Nothing retries: no run_retry, and the one alarm is the approval's expiry (no reminder to an address that cannot get it).
    expect(await typesOf("strict-unverified")).not.toContain("run_retry");
    expect(await alarmAt("strict-unverified")).toBe(approval!.expires_at);
    expect(await runDurableObjectAlarm(object("strict-unverified"))).toBe(true);
    expect(sent).toEqual([]);
    expect((await typesOf("strict-unverified")).filter((t) => t === "approval_email_failed")).toHaveLength(1);

    const decided = await call(`/runs/strict-unverified/approvals/${approval!.id}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(decided.status).toBe(200);
    expect(await settle("strict-unverified")).toMatchObject({ status: "succeeded", output: "posted" });
    expect(await effectCount("strict-unverified")).toBe(1);
  });

  it("the run page and the inbox say the email was not delivered, and why", async () => {
    await startPosting("unverified-writer", "strict-page");
    const page = await (await call("/runs/strict-page/view", { headers: auth })).text();
    expect(page).toContain(`email not delivered: ${NOT_ALLOWED} (the request to approver@unverified.test)`);
    const inbox = await (await call("/inbox", { headers: auth })).text();
    expect(inbox).toContain(`email not delivered: ${NOT_ALLOWED}`);
  });

  it("a send that keeps failing for a passing reason is tried five times with growing delays, then given up with its reminder; the run stays decidable", async () => {
    vi.mocked(mailer.deliver).mockRejectedValue(Object.assign(new Error("rate limited for ops@example.com"), { code: "E_RATE_LIMIT_EXCEEDED" }));
    // Asks alice, reminds her after 4h, escalates to lead after 24h.
    await startPosting("escalate-writer", "strict-transient");
    expect((await stub("strict-transient").status())!.status).toBe("awaiting_approval");
    const due = () =>
      runInDurableObject(object("strict-transient"), (_o, state) =>
        state.storage.sql.exec<{ due_at: number }>("SELECT due_at FROM approval_mail WHERE kind = 'request'").toArray(),
      );
    const delays: number[] = [];
    for (let attempt = 2; attempt <= 5; attempt++) {
      const [row] = await due();
      delays.push(row!.due_at - Date.now());
      await runInDurableObject(object("strict-transient"), (_o, state) => {
        state.storage.sql.exec("UPDATE approval_mail SET due_at = ? WHERE kind = 'request'", Date.now() - 1);
      });
      await runDurableObjectAlarm(object("strict-transient"));
    }
    // 1, 2, 4 and 8 minutes (less the time the test took).
    expect(delays.map((d) => Math.round(d / 60_000))).toEqual([1, 2, 4, 8]);
    const failed = (await stub("strict-transient").eventsSince("0-0", 500))!.events.filter((e) => e.type === "approval_email_failed").map((e) => e.data);
    expect(failed.map((d) => d.retry)).toEqual([true, true, true, true, false]);
    // The reason names no address; the code is the platform's.
    expect(failed[0]).toMatchObject({ code: "E_RATE_LIMIT_EXCEEDED", error: "the sending rate limit was reached" });
    const view = (await stub("strict-transient").status())!;
    expect(view.status).toBe("awaiting_approval");
    expect(view.approvals[0]!.email_failures).toMatchObject([{ code: "E_RATE_LIMIT_EXCEEDED", retrying: false, attempts: 5 }]);
    expect(await due()).toEqual([]);
    // Her reminder went with the request (it could not reach her either); the escalation to lead stays planned.
    const planned = await runInDurableObject(object("strict-transient"), (_o, state) =>
      state.storage.sql.exec<{ kind: string; recipient: string }>("SELECT kind, recipient FROM approval_mail ORDER BY kind").toArray(),
    );
    expect(planned).toEqual([{ kind: "escalation", recipient: "lead@example.com" }]);
  });

  it("a reminder refused for a lasting reason is given up at once, with its reason", async () => {
    await script("escalate-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl("strict-remind"), method: "POST" } }] }]);
    await stub("strict-remind").start({ id: "strict-remind", worker: "escalate-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(object("strict-remind"));
    expect(sent.map((m) => m.to)).toEqual(["alice@example.com"]);
    vi.mocked(mailer.deliver).mockRejectedValueOnce(Object.assign(new Error("suppressed"), { code: "E_RECIPIENT_SUPPRESSED" }));
    await runInDurableObject(object("strict-remind"), (_o, state) => {
      state.storage.sql.exec("UPDATE approval_mail SET due_at = ? WHERE kind = 'reminder'", Date.now() - 1);
    });
    await runDurableObjectAlarm(object("strict-remind"));
    await runDurableObjectAlarm(object("strict-remind"));
    const view = (await stub("strict-remind").status())!;
    expect(view.approvals[0]!.email_failures).toMatchObject([{ kind: "reminder", to: "alice@example.com", code: "E_RECIPIENT_SUPPRESSED", retrying: false }]);
    const failed = (await stub("strict-remind").eventsSince("0-0", 500))!.events.filter((e) => e.type === "approval_email_failed");
    expect(failed.map((e) => e.data)).toEqual([
      {
        approval_id: view.approvals[0]!.id,
        kind: "reminder",
        to: "alice@example.com",
        error: "the recipient is on the suppression list (an earlier message bounced or was reported as spam)",
        code: "E_RECIPIENT_SUPPRESSED",
        retry: false,
      },
    ]);
    // The person the request reached can still decide by reply: a failed reminder takes nothing from them.
    expect(sent.map((m) => m.to)).toEqual(["alice@example.com"]);
  });

  it("every Message-ID we set is replaced on send, as Email Sending does", async () => {
    await startPosting("pause-writer", "strict-id");
    const [mail] = sent;
    const parsed = await parseMail(mail!);
    expect(parsed.messageId).toMatch(/^<[0-9a-f-]{36}@email\.strict-local\.invalid>$/);
    expect(mail!.raw.match(/^message-id:/gim)).toHaveLength(1);
  });
});

describe("the strict layer and the failure classes, unit by unit", () => {
  it("allowed recipients: exact addresses, *@domain, * for any; nothing else", () => {
    expect(allowedRecipient("a@x.test, *@y.test", "A@X.test")).toBe(true);
    expect(allowedRecipient("a@x.test *@y.test", "b@y.test")).toBe(true);
    expect(allowedRecipient("a@x.test, *@y.test", "b@x.test")).toBe(false);
    expect(allowedRecipient("a@x.test, *@y.test", "b@sub.y.test")).toBe(false);
    expect(allowedRecipient(undefined, "a@x.test")).toBe(false);
    expect(allowedRecipient("*", "anyone@anywhere.test")).toBe(true);
  });

  it("the replaced Message-ID takes the place of ours and of its folded lines; the body is untouched", () => {
    const raw = "From: <a@x.test>\r\nMessage-ID:\r\n <ours@x.test>\r\nSubject: s\r\n\r\nMessage-ID: <in-the-body@x.test>\r\n";
    const { mail, messageId } = asProductionSends({ EMAIL_ALLOWED_RECIPIENTS: "*" }, { from: "a@x.test", to: "b@y.test", raw });
    expect(mail.raw).toBe(`Message-ID: ${messageId}\r\nFrom: <a@x.test>\r\nSubject: s\r\n\r\nMessage-ID: <in-the-body@x.test>\r\n`);
    expect(() => asProductionSends({ EMAIL_ALLOWED_RECIPIENTS: "a@x.test" }, { from: "a@x.test", to: "b@y.test", raw })).toThrow(RecipientNotAllowed);
  });

  it("lasting refusals by code or by the message of a binding without codes; others pass; no address in a reason", () => {
    expect(sendFailure(new RecipientNotAllowed())).toMatchObject({ code: "E_RECIPIENT_NOT_ALLOWED", lasting: true });
    // Local workerd for a binding's allowed_destination_addresses; Email Routing's wording.
    expect(sendFailure(new Error("email to mallory@evil.test not allowed"))).toMatchObject({
      code: "E_RECIPIENT_NOT_ALLOWED",
      lasting: true,
      reason: NOT_ALLOWED,
    });
    expect(sendFailure(new Error("destination address is not a verified address"))).toMatchObject({ code: "E_RECIPIENT_NOT_ALLOWED", lasting: true });
    expect(sendFailure(new Error("email from x@y.test not allowed"))).toMatchObject({ code: "E_SENDER_NOT_VERIFIED", lasting: true });
    expect(sendFailure(Object.assign(new Error("x"), { code: "E_DAILY_LIMIT_EXCEEDED" }))).toMatchObject({ lasting: true });
    expect(sendFailure(Object.assign(new Error("x"), { code: "E_INTERNAL_SERVER_ERROR" }))).toMatchObject({ lasting: false });
    expect(sendFailure(Object.assign(new Error("x"), { code: "E_SOMETHING_NEW" }))).toMatchObject({ code: "E_SOMETHING_NEW", lasting: false });
    const unknown = sendFailure(new Error(`relay said no to "Ann" <ann@example.com>, bob@example.com\n${"z".repeat(5000)}`));
    expect(unknown).toMatchObject({ code: "E_UNKNOWN", lasting: false });
    expect(unknown.reason).not.toMatch(/ann@|bob@/);
    expect(unknown.reason.length).toBeLessThanOrEqual(220);
  });
});
