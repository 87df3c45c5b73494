import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import type { StartRun } from "../../src/runs/types";
import { fromBase64Url } from "../../src/tokens/base64url";
import { signApprovalToken, type ApprovalTokenPayload } from "../../src/tokens/approval-token";
import { effectCount, effectUrl, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, deliver, parseMail, replyTo } from "../email/support";

const SECRET = "test-approval-secret";
const auth = { Authorization: "Bearer test-token" };
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const decideBy = (link: string, decision = "approve") =>
  call(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ decision }).toString() });

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** A run of `worker` paused at its one POST; `trigger` says who started it. */
async function pausedRun(worker: string, id: string, trigger: StartRun["trigger"] = { kind: "api" }, approvalMode: StartRun["approvalMode"] = "ask") {
  await script(worker, [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "x" } }] }, { text: "posted" }]);
  await stub(id).start({ id, worker, input: { input: "post it" }, approvalMode, budget: {}, trigger });
  const view = await settle(id);
  expect(view.status).toBe("awaiting_approval");
  return view.approvals[0]!;
}

/** Each approval email sent: its recipient, its link and what the link's token says. */
async function emailedLinks() {
  return Promise.all(
    sent.map(async (m) => {
      const mail = await parseMail(m);
      const link = /href="(https:\/\/edgework\.test\/approvals\/[^"?]+)\?intent=approve"/.exec(mail.html!)![1]!;
      const payload = JSON.parse(new TextDecoder().decode(fromBase64Url(link.split("/approvals/")[1]!.split(".")[0]!))) as ApprovalTokenPayload;
      return { to: m.to, link, payload, mail };
    }),
  );
}

const signedLink = async (payload: ApprovalTokenPayload) => `/approvals/${await signApprovalToken(payload, SECRET)}`;

describe("who may answer: approvals whose policy names people", () => {
  it("each named address gets its own email with a link bound to it; a pattern gets none; the view shows the policy", async () => {
    const approval = await pausedRun("named-writer", "named-mail");
    const links = await emailedLinks();
    expect(links.map((l) => l.to).sort()).toEqual(["bob@example.com", "lead@example.com"]);
    for (const l of links) expect(l.payload).toMatchObject({ run: "named-mail", approval: approval.id, to: l.to });
    expect(approval.deciders).toEqual({ ask: ["lead@example.com", "bob@example.com", "*@ops.example.com"], allow_initiator: false });
    expect(approval.by).toBeNull();
  });

  it("a forwarded link decides as the person it was sent to: by {email, via: link} in GET /runs/:id, the events and the run page", async () => {
    await pausedRun("named-writer", "named-forward");
    const bob = (await emailedLinks()).find((l) => l.to === "bob@example.com")!;
    // Whoever holds bob's link (he forwarded it): the decision is bob's, on the record.
    expect((await decideBy(bob.link)).status).toBe(200);
    const done = await settle("named-forward");
    expect(done).toMatchObject({
      status: "succeeded",
      approvals: [{ status: "approved", decided_by: "approval link (bob@example.com)", by: { email: "bob@example.com", via: "link" } }],
    });
    const api = (await (await call("/runs/named-forward", { headers: auth })).json()) as typeof done;
    expect(api.approvals[0]!.by).toEqual({ email: "bob@example.com", via: "link" });
    const recorded = (await stub("named-forward").eventsSince())!.events.find((e) => e.type === "approval_recorded");
    expect(recorded?.data).toMatchObject({ decider: { email: "bob@example.com", via: "link" } });
    const page = await (await call("/runs/named-forward/view", { headers: auth })).text();
    expect(page).toContain("by bob@example.com (via link)");
    expect(page).toContain("may decide: lead@example.com, bob@example.com, *@ops.example.com");
    expect(await effectCount("named-forward")).toBe(1);
  });

  it("refused with 403 and the reason, logged without the address, nothing changes: the API token, a session, strangers, tricks", async () => {
    const approval = await pausedRun("named-writer", "named-refused");
    const [lead] = (await emailedLinks()).filter((l) => l.to === "lead@example.com");
    const before = await stub("named-refused").status();
    const eventsBefore = (await stub("named-refused").eventsSince())!.events.length;
    const logged = vi.spyOn(console, "log");
    const base = { run: "named-refused", approval: approval.id, exp: approval.expires_at };

    const api = await call(`/runs/named-refused/approvals/${approval.id}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(api.status).toBe(403);
    expect(await api.json()).toEqual({ error: "this approval names who may decide it, and the API token names no person" });

    const cases: Array<[string, string, number, RegExp]> = [
      // Links signed by this deployment, e.g. an escalation to someone the policy does not name.
      ["outside the list", await signedLink({ ...base, to: "mallory@example.com" }), 403, /mallory@example\.com is not among the people/],
      ["a subdomain of a named domain", await signedLink({ ...base, to: "eve@dev.ops.example.com" }), 403, /not among the people/],
      ["Kelvin sign for k", await signedLink({ ...base, to: "\u212Aate@ops.example.com" }), 403, /not a plain ASCII address/],
      ["zero-width space", await signedLink({ ...base, to: "lead@example.com\u200b" }), 403, /not a plain ASCII address/],
      ["the pattern itself", await signedLink({ ...base, to: "*@ops.example.com" }), 403, /not a plain ASCII address/],
      ["an inbox session", await signedLink({ ...base, via: "inbox" }), 403, /session signed in with the API token names no person/],
      // Tampered: mallory's address in lead's signed payload.
      [
        "recipient swapped in the token",
        `/approvals/${btoa(JSON.stringify({ ...lead!.payload, to: "mallory@example.com" }))
          .replace(/=+$/, "")
          .replace(/\+/g, "-")
          .replace(/\//g, "_")}.${lead!.link.split(".").at(-1)}`,
        403,
        /This link is not valid/,
      ],
    ];
    for (const [what, link, status, why] of cases) {
      expect((await call(link)).status, `GET ${what}`).toBe(status);
      const res = await decideBy(link);
      expect(res.status, what).toBe(status);
      expect(await res.text(), what).toMatch(why);
    }
    expect(await stub("named-refused").status()).toEqual(before);
    expect((await stub("named-refused").eventsSince())!.events.length).toBe(eventsBefore);
    const lines = logged.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"approval_refused"'));
    expect(lines).toHaveLength(7);
    expect(lines.map((l) => JSON.parse(l).refusal)).toEqual(["no_person", "not_named", "not_named", "bad_address", "bad_address", "bad_address", "no_person"]);
    expect(lines.join("\n")).not.toContain("mallory");
  });

  it("a named address in any case, a person at a named domain through Access, and a reply from a named recipient decide", async () => {
    const a1 = await pausedRun("named-writer", "named-access");
    const access = await signedLink({ run: "named-access", approval: a1.id, exp: a1.expires_at, via: "access", to: "Alice@Ops.Example.com" });
    expect((await decideBy(access)).status).toBe(200);
    expect((await settle("named-access")).approvals[0]!.by).toEqual({ email: "alice@ops.example.com", via: "access" });

    sent.length = 0;
    await pausedRun("named-writer", "named-reply");
    const lead = (await emailedLinks()).find((l) => l.to === "lead@example.com")!;
    const address = lead.mail.replyTo![0]!.address!;
    // Someone the policy names by domain, but whom the approval was not emailed to, cannot reply.
    expect(await deliver("alice@ops.example.com", address, replyTo(lead.mail, "alice@ops.example.com", address, "yes"))).toEqual([
      "the reply does not come from an address this approval was emailed to",
    ]);
    expect((await stub("named-reply").status())!.approvals[0]!.status).toBe("pending");
    expect(await deliver("LEAD@example.com", address, replyTo(lead.mail, "lead@EXAMPLE.com", address, "yes"))).toEqual([]);
    expect((await settle("named-reply")).approvals[0]).toMatchObject({ status: "approved", by: { email: "lead@example.com", via: "reply" } });
  });

  it("a send that fails for the second recipient is retried for that one only: nobody gets two emails", async () => {
    const send = vi.mocked(mailer.deliver);
    send.mockImplementationOnce(send.getMockImplementation()!).mockRejectedValueOnce(new Error("mail relay down"));
    await pausedRun("named-writer", "named-retry");
    expect(sent.map((m) => m.to)).toEqual(["lead@example.com"]);
    // The retry of bob's is due a minute later: the paused run's alarm sends it.
    await runInDurableObject(env.RUNS.getByName("named-retry"), (_o, state) => {
      state.storage.sql.exec("UPDATE approval_mail SET due_at = due_at - 61000 WHERE sent_at IS NULL");
    });
    await runDurableObjectAlarm(env.RUNS.getByName("named-retry"));
    expect(sent.map((m) => m.to)).toEqual(["lead@example.com", "bob@example.com"]);
    const emailed = (await stub("named-retry").eventsSince())!.events.filter((e) => e.type === "approval_emailed").map((e) => e.data.to);
    expect(emailed).toEqual(["lead@example.com", "bob@example.com"]);
  });

  it("approval_mode approve_all does not decide a call whose policy names people", async () => {
    await pausedRun("named-writer", "named-mode", { kind: "api" }, "approve_all");
    expect(await effectCount("named-mode")).toBe(0);
  });
});

describe("who may answer: the run's initiator", () => {
  const fromLead = { kind: "email", name: "inbox", from: "Lead@Example.com", message_id: "<m1@example.com>" };

  it("the sender of the email that started a run may not approve its calls: by link or by reply; someone else named may", async () => {
    await pausedRun("named-writer", "initiator-refused", fromLead);
    const links = await emailedLinks();
    const lead = links.find((l) => l.to === "lead@example.com")!;
    // The page says so before the form is filled in; the POST is refused all the same.
    const page = await call(lead.link);
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("the person who started this run may not decide its approvals");
    const res = await decideBy(lead.link);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("the person who started this run may not decide its approvals");
    const address = lead.mail.replyTo![0]!.address!;
    expect(await deliver("lead@example.com", address, replyTo(lead.mail, "lead@example.com", address, "yes"))).toEqual([
      "the person who started this run may not decide its approvals (the policy would need allow_initiator: true)",
    ]);
    expect((await stub("initiator-refused").status())!.approvals[0]!.status).toBe("pending");
    expect((await decideBy(links.find((l) => l.to === "bob@example.com")!.link)).status).toBe(200);
    expect(await settle("initiator-refused")).toMatchObject({ status: "succeeded", approvals: [{ by: { email: "bob@example.com", via: "link" } }] });
  });

  it("also where the policy names nobody (approval.notify); allow_initiator: true lets the initiator decide", async () => {
    await pausedRun("pause-writer", "initiator-notify", { ...fromLead, from: "approver@example.com" });
    const [mine] = await emailedLinks();
    expect((await decideBy(mine!.link)).status).toBe(403);

    sent.length = 0;
    await pausedRun("initiator-writer", "initiator-allowed", fromLead);
    const [lead] = await emailedLinks();
    expect((await decideBy(lead!.link)).status).toBe(200);
    expect(await settle("initiator-allowed")).toMatchObject({ status: "succeeded", approvals: [{ by: { email: "lead@example.com", via: "link" } }] });
  });

  it("a plus-addressed sender, or one whose address does not normalize, cannot approve through the bare address either", async () => {
    for (const [id, from] of [
      ["initiator-plus", "Lead+tag@Example.com"],
      ["initiator-unreadable", "lead@example.com."],
    ] as const) {
      sent.length = 0;
      await pausedRun("named-writer", id, { ...fromLead, from });
      const lead = (await emailedLinks()).find((l) => l.to === "lead@example.com")!;
      const res = await decideBy(lead.link);
      expect(res.status, from).toBe(403);
      expect((await stub(id).status())!.approvals[0]!.status).toBe("pending");
    }
  });
});
