import { exports } from "cloudflare:workers";
import PostalMime from "postal-mime";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import { missingEmailConfig } from "../../src/email/approval-notifier";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail } from "../email/support";

const XSS = "<script>alert(1)</script>";
const auth = { Authorization: "Bearer test-token" };
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const postForm = (url: string, fields: Record<string, string>) =>
  call(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** Starts a pause-writer run whose one POST carries `body`, and settles it at the approval. */
async function pausedRun(tag: string, after: unknown[], body = XSS) {
  await script("pause-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST", body } }] }, ...after]);
  const res = await call("/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ worker: "pause-writer", input: "post it" }),
  });
  const { id } = (await res.json()) as { id: string };
  const view = await settle(id);
  expect(view.status).toBe("awaiting_approval");
  return id;
}

async function parsedEmail(i = 0) {
  return PostalMime.parse(sent[i]!.raw);
}

const linkIn = (html: string, intent: string) => {
  const m = new RegExp(`href="(https://edgework\\.test/approvals/[^"?]+)\\?intent=${intent}"`).exec(html);
  if (!m) throw new Error(`no ${intent} link in the email`);
  return m[1]!;
};

describe("approval by email link", () => {
  it("one email per approval; its Approve link opens the page; POST approves; the run completes", async () => {
    const id = await pausedRun("mail-approve", [{ text: "posted it" }]);
    expect(sent).toHaveLength(1);
    const mail = await parsedEmail();
    expect(sent[0]).toMatchObject({ from: "edgework@example.com", to: "approver@example.com" });
    expect(mail.subject).toBe("Approval needed: pause-writer wants to call fx_fetch");
    expect(mail.to?.[0]?.address).toBe("approver@example.com");
    expect(mail.text).toContain("pause-writer wants to call fx_fetch.");
    expect(mail.text).toContain(`Run: ${id}, started by the API`);
    expect(mail.text).toContain(`"body": "${XSS}"`);
    // The HTML part shows the argument as text, never as markup.
    expect(mail.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(mail.html).not.toContain(XSS);

    const link = linkIn(mail.html!, "approve");
    expect(linkIn(mail.html!, "reject")).toBe(link);
    const page = await call(`${link}?intent=approve`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("pause-writer wants to call <code>fx_fetch</code>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain(XSS);
    expect(html).toContain('<form method="post"');
    expect(html).not.toMatch(/<script/i);

    const decided = await postForm(link, { decision: "approve", note: "go ahead" });
    expect(decided.status).toBe(200);
    const result = await decided.text();
    expect(result).toContain("Approved");
    const runLink = /href="(\/runs\/[^"]+\/view\?token=[^"]+)"/.exec(result)![1]!.replace(/&amp;/g, "&");

    const done = await settle(id);
    expect(done).toMatchObject({
      status: "succeeded",
      output: "posted it",
      approvals: [{ status: "approved", note: "go ahead", decided_by: "approval link (approver@example.com)" }],
    });
    expect(await effectCount("mail-approve")).toBe(1);
    expect(sent).toHaveLength(1);

    const runPage = await call(runLink);
    expect(runPage.status).toBe(200);
    const runHtml = await runPage.text();
    expect(runHtml).toContain("succeeded");
    expect(runHtml).toContain("posted it");
    expect(runHtml).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(runHtml).not.toContain(XSS);

    // The link is single-use: deciding again or even showing the form is refused.
    expect((await postForm(link, { decision: "reject" })).status).toBe(409);
    expect((await call(link)).status).toBe(409);
  });

  it("Reject: the model receives the rejection and the run ends with the outcome it gives for it", async () => {
    const id = await pausedRun("mail-reject", [{ text: "ok, I will not post" }], "harmless");
    const link = linkIn((await parsedEmail()).html!, "reject");
    const decided = await postForm(link, { decision: "reject", note: "wrong repo" });
    expect(decided.status).toBe(200);
    expect(await decided.text()).toContain("Rejected");
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "ok, I will not post", approvals: [{ status: "rejected", note: "wrong repo" }] });
    const last = (await modelRequests("pause-writer")).at(-1) as { messages: Array<{ content: string }> };
    expect(last.messages.at(-1)!.content).toBe("Error: the call to fx_fetch was rejected by approval link (approver@example.com): wrong repo");
    expect(await effectCount("mail-reject")).toBe(0);
  });

  it("any number of GETs changes nothing", async () => {
    const id = await pausedRun("mail-gets", [{ text: "never" }]);
    const link = linkIn((await parsedEmail()).html!, "approve");
    const before = await stub(id).status();
    const eventsBefore = (await stub(id).eventsSince())!.events.length;
    for (let i = 0; i < 5; i++) expect((await call(`${link}?intent=${i % 2 ? "approve" : "reject"}`)).status).toBe(200);
    expect(await stub(id).status()).toEqual(before);
    expect((await stub(id).eventsSince())!.events.length).toBe(eventsBefore);
  });

  it("tampered, forged and malformed links are refused with 403; nothing is decided", async () => {
    const id = await pausedRun("mail-forged", [{ text: "never" }]);
    const link = linkIn((await parsedEmail()).html!, "approve");
    const [body, mac] = link.split("/approvals/")[1]!.split(".");
    const forgedBody = btoa(JSON.stringify({ run: id, approval: "ap_x", exp: Date.now() + 1e9 })).replace(/=+$/, "");
    for (const bad of [`${body}.${mac!.replace(/^./, (c) => (c === "A" ? "B" : "A"))}`, `${forgedBody}.${mac}`, "nonsense", `${body}.`]) {
      const get = await call(`/approvals/${bad}`);
      expect(get.status, bad).toBe(403);
      expect(await get.text()).toContain("This link is not valid");
      expect((await postForm(`/approvals/${bad}`, { decision: "approve" })).status).toBe(403);
    }
    expect((await stub(id).status())!.approvals[0]!.status).toBe("pending");
  });

  it("an expired link is refused with 410", async () => {
    const id = await pausedRun("mail-expired", [{ text: "late" }]);
    const { signApprovalToken } = await import("../../src/tokens/approval-token");
    const approval = (await stub(id).status())!.approvals[0]!;
    const expired = await signApprovalToken({ run: id, approval: approval.id, exp: Date.now() - 1 }, "test-approval-secret");
    expect((await call(`/approvals/${expired}`)).status).toBe(410);
    expect((await postForm(`/approvals/${expired}`, { decision: "approve" })).status).toBe(410);
    expect((await stub(id).status())!.approvals[0]!.status).toBe("pending");
  });

  it("the run page needs the link's token for that run, or the API token", async () => {
    const id = await pausedRun("mail-view", [{ text: "x" }]);
    const token = linkIn((await parsedEmail()).html!, "approve").split("/approvals/")[1]!;
    expect((await call(`/runs/${id}/view?token=${token}`)).status).toBe(200);
    expect((await call(`/runs/${id}/view`, { headers: auth })).status).toBe(200);
    expect((await call(`/runs/${id}/view`)).status).toBe(403);
    expect((await call(`/runs/other-run/view?token=${token}`)).status).toBe(403);
  });

  it("replay after eviction right after the email step sends no second email", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("mail-evict"), method: "POST" } }] }, { text: "done" }]);
    const id = "mail-evict";
    await stub(id).start({ id, worker: "pause-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    // Journal after activation 1: the model turn, then the email step. Abort right after it.
    await stub(id).setTestHooks({ fault: { atJournalSize: 2, mode: "abort" } });
    const count = { activations: 0, failed: 0 };
    const view = await settle(id, { count });
    expect(count).toEqual({ activations: 2, failed: 1 });
    expect(view.status).toBe("awaiting_approval");
    expect(sent).toHaveLength(1);
    await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "test" });
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
    expect(sent).toHaveLength(1);
  });

  it("a send that fails for a passing reason pauses the run at once; the alarm sends it again later, once; decidable meanwhile", async () => {
    vi.mocked(mailer.deliver).mockRejectedValueOnce(new Error("mail relay down"));
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("mail-retry"), method: "POST" } }] }, { text: "done" }]);
    const id = "mail-retry";
    await stub(id).start({ id, worker: "pause-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const { runDurableObjectAlarm, runInDurableObject } = await import("cloudflare:test");
    const { env } = await import("cloudflare:workers");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    // One activation: paused, no retry of the run, the failure and its reason on the approval.
    const mid = (await stub(id).status())!;
    expect(mid.status).toBe("awaiting_approval");
    expect(mid.approvals[0]!.email_failures).toEqual([
      {
        kind: "request",
        to: "approver@example.com",
        reason: "the send failed: mail relay down",
        code: "E_UNKNOWN",
        retrying: true,
        attempts: 1,
        at: expect.any(Number),
      },
    ]);
    const events = (await stub(id).eventsSince())!.events;
    expect(events.some((e) => e.type === "run_retry")).toBe(false);
    expect(events.find((e) => e.type === "approval_email_failed")?.data).toMatchObject({ kind: "request", code: "E_UNKNOWN", retry: true });
    expect(sent).toHaveLength(0);
    // Its retry is a minute out: not before; then once, however often the alarm runs.
    expect(await runDurableObjectAlarm(env.RUNS.getByName(id))).toBe(true);
    expect(sent).toHaveLength(0);
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
      state.storage.sql.exec("UPDATE approval_mail SET due_at = due_at - 61000");
    });
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(sent.map((m) => m.to)).toEqual(["approver@example.com"]);
    const view = (await stub(id).status())!;
    expect(view.status).toBe("awaiting_approval");
    expect(view.approvals[0]!.email_failures).toEqual([]);
    await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "test" });
    expect(await settle(id)).toMatchObject({ status: "succeeded" });
  });

  it("approving identical calls for the rest of the run: the same call later does not ask again", async () => {
    const post = { url: effectUrl("remember"), method: "POST", body: "same" };
    await script("remember-writer", [
      { tool_calls: [{ name: "fx_fetch", arguments: post }] },
      { tool_calls: [{ name: "fx_fetch", arguments: post }] },
      { tool_calls: [{ name: "fx_fetch", arguments: { ...post, body: "different" } }] },
      { text: "done" },
    ]);
    const id = "remember";
    await stub(id).start({ id, worker: "remember-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    await settle(id);
    const link = linkIn((await parsedEmail()).html!, "approve");
    expect((await postForm(link, { decision: "approve", remember: "on" })).status).toBe(200);
    const view = await settle(id);
    // The second (identical) call went through; the third (different) one asks.
    expect(view.status).toBe("awaiting_approval");
    expect(view.approvals.map((a) => a.status)).toEqual(["approved", "pending"]);
    expect(await effectCount("remember")).toBe(2);
    expect(sent).toHaveLength(2);
  });

  it("with no recipient: no email, one clear warning for any number of approvals, and the approval still works", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const id of ["silent-1", "silent-2"]) {
      await script("silent-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "fine" }]);
      await stub(id).start({ id, worker: "silent-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
      const view = await settle(id);
      expect(view.status).toBe("awaiting_approval");
      expect((await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "api" })).ok).toBe(true);
      expect(await settle(id)).toMatchObject({ status: "succeeded", output: "fine" });
    }
    expect(sent).toHaveLength(0);
    const warnings = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes("approval emails are off"));
    expect(warnings).toEqual([
      "edgework: approval emails are off (missing a recipient (approval.notify in the worker file, or APPROVER_EMAIL)); approvals stay reachable by API and on the run page",
    ]);
  });

  it("a run that ended voids its approval: the link says why (GET and POST answer 409) and nothing is decided", async () => {
    const id = "link-void";
    await script("void-parent", [
      {
        tool_calls: [
          { id: "post", name: "gate_fetch", arguments: { url: effectUrl(id), method: "POST" } },
          { id: "child", name: "void-child", arguments: { input: "work" } },
        ],
      },
      { text: "revived" },
    ]);
    await script("void-child", [{ status: 400 }, { text: "child ok" }]);
    await stub(id).start({ id, worker: "void-parent", input: { input: "go" }, approvalMode: "ask", budget: {} });
    expect((await settle(id)).status).toBe("failed");
    const link = linkIn((await parsedEmail()).html!, "approve");
    const why = "The run ended (failed), so this approval is void: deciding it would change nothing.";
    const page = await call(`${link}?intent=approve`);
    expect(page.status).toBe(409);
    const html = await page.text();
    expect(html).toContain("This approval is void");
    expect(html).toContain(why);
    expect(html).not.toContain("<form");
    const decided = await postForm(link, { decision: "approve" });
    expect(decided.status).toBe(409);
    expect(await decided.text()).toContain(why);
    expect(await settle(id)).toMatchObject({ status: "failed", approvals: [{ status: "voided" }] });
    expect(await effectCount(id)).toBe(0);
  });

  it("without email configuration the approval is still reachable; what is missing is named", () => {
    expect(missingEmailConfig({} as Env, undefined)).toEqual([
      "the APPROVAL_EMAIL send_email binding",
      "APPROVAL_FROM",
      "APPROVAL_SECRET",
      "PUBLIC_URL",
      "a recipient (approval.notify in the worker file, or APPROVER_EMAIL)",
    ]);
  });
});
