import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { MAX_EDIT_BYTES, MAX_RESPONSE_CHARS } from "../../src/engine/approvals/edit";
import type { RunView, StartRun } from "../../src/runs/types";
import { signApprovalToken, type ApprovalTokenPayload } from "../../src/tokens/approval-token";
import { effectBodies, effectCount, effectUrl, modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, parseMail } from "../email/support";
import { appClient } from "../client/app-client";
import { BadRequestError, ConflictError } from "../../src/client";

const SECRET = "test-approval-secret";
const auth = { Authorization: "Bearer test-token" };
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const api = (id: string, approvalId: string, body: unknown) =>
  call(`/runs/${id}/approvals/${approvalId}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
const post = (link: string, fields: Record<string, string>) =>
  call(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const signedLink = async (payload: ApprovalTokenPayload) => `/approvals/${await signApprovalToken(payload, SECRET)}`;

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

/** A run of `worker` paused at its one POST of "as asked" to the effect counter `id`. */
async function pausedRun(worker: string, id: string, trigger: StartRun["trigger"] = { kind: "api" }) {
  await script(worker, [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "as asked" } }] },
    { text: "posted" },
  ]);
  await stub(id).start({ id, worker, input: { input: "post it" }, approvalMode: "ask", budget: {}, trigger });
  const view = await settle(id);
  expect(view.status).toBe("awaiting_approval");
  return view.approvals[0]!;
}

/** The tool message the model's second request carried (its answer to the call). */
async function toolMessage(model: string): Promise<string> {
  const second = (await modelRequests(model))[1] as { messages: Array<{ role: string; content: string }> };
  return second.messages.find((m) => m.role === "tool")!.content;
}

/** What a refused request must leave as it was: the approval pending, no event, no effect. */
async function unchanged(id: string) {
  const view = (await stub(id).status())!;
  return { status: view.status, approval: view.approvals[0]!.status, events: (await stub(id).eventsSince())!.events.length, effects: await effectCount(id) };
}

describe("edit, then approve", () => {
  it("by API: the effect receives the edited body; the run shows the original, the edit and its editor; the model is told", async () => {
    const approval = await pausedRun("edit-writer", "edit-api");
    expect(approval).toMatchObject({ editable: true, edited_args: null, response: null, args_sha256: null });
    expect(approval.input_schema).toMatchObject({ type: "object", properties: { url: {}, method: {}, body: {} } });
    const edited = { url: effectUrl("edit-api"), method: "POST", body: "as edited" };
    const res = await api("edit-api", approval.id, { decision: "approve", arguments: edited, note: "fixed the typo" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ approval_id: approval.id, approved: true, status: "approved", edited: true });

    const done = await settle("edit-api");
    expect(done.status).toBe("succeeded");
    expect(await effectBodies("edit-api")).toEqual(["as edited"]);
    const view = (await (await call("/runs/edit-api", { headers: auth })).json()) as RunView;
    expect(view.approvals[0]).toMatchObject({
      status: "approved",
      args: { body: "as asked" },
      edited_args: edited,
      by: { email: null, via: "api" },
      decided_by: "api",
      note: "fixed the typo",
      editable: true,
      // Decided: the schema is no longer offered.
      input_schema: null,
    });
    expect(view.approvals[0]!.args_sha256).toMatch(/^[0-9a-f]{32}$/);
    expect(view.approvals[0]!.decided_at).toEqual(expect.any(Number));
    expect(view.call_tree!.tools[0]).toMatchObject({ args: { body: "as asked" }, edited: { args: edited, by: { email: null, via: "api" } }, status: "ok" });

    const told = await toolMessage("edit-writer");
    expect(told).toMatch(
      /^\[A person edited this call's arguments before approving it; it was called with \{.*"body":"as edited".*\}\. The approver's note: fixed the typo\]\n/,
    );
    const events = (await stub("edit-api").eventsSince())!.events;
    expect(events.find((e) => e.type === "approval_decided")?.data).toMatchObject({ approved: true, edited: true });
    expect(events.find((e) => e.type === "approval_recorded")?.data).toMatchObject({ status: "approved", edited: true });

    const page = await (await call("/runs/edit-api/view", { headers: auth })).text();
    expect(page).toContain("edited; ran with:");
    expect(page).toContain("edited before approval by the API token (via api); it ran with:");
    expect(page).toContain("as edited");
    expect(page).toContain(`sha256:${view.approvals[0]!.args_sha256!.slice(0, 12)}`);
  });

  it("the same arguments as asked are no edit", async () => {
    const approval = await pausedRun("edit-writer", "edit-same");
    const res = await api("edit-same", approval.id, { decision: "approve", arguments: { body: "as asked", method: "POST", url: effectUrl("edit-same") } });
    expect(await res.json()).toMatchObject({ approved: true, edited: false });
    expect((await settle("edit-same")).approvals[0]!.edited_args).toBeNull();
    expect(await effectBodies("edit-same")).toEqual(["as asked"]);
    expect(await toolMessage("edit-writer")).not.toContain("A person");
  });

  it("replayed after an interruption: the same edited arguments, the effect once, the model told once", async () => {
    for (const k of [3, 4]) {
      const id = `edit-replay-${k}`;
      const approval = await pausedRun("edit-writer", id);
      // Steps: the model's call, its notification, the decision, the call's result, the answer; interrupted before step k+1.
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: "abort" } });
      expect((await api(id, approval.id, { decision: "approve", arguments: { url: effectUrl(id), method: "POST", body: `edited ${k}` } })).status).toBe(200);
      const count = { activations: 0, failed: 0 };
      const done = await settle(id, { count });
      expect(count.failed, `interrupted at ${k}`).toBe(1);
      expect(done.status).toBe("succeeded");
      expect(await effectBodies(id), `interrupted at ${k}`).toEqual([`edited ${k}`]);
      expect(await modelRequests("edit-writer")).toHaveLength(2);
      expect(await toolMessage("edit-writer")).toContain(`"body":"edited ${k}"`);
    }
  });
});

describe("an edit a deny rule refuses", () => {
  it("the call never runs, and the run shows it denied and why, not approved as edited", async () => {
    const approval = await pausedRun("edit-denied", "edit-denied");
    const res = await api("edit-denied", approval.id, { decision: "approve", arguments: { url: effectUrl("edit-denied"), method: "DELETE" } });
    expect(res.status).toBe(200);
    expect((await settle("edit-denied")).status).toBe("succeeded");
    expect(await effectCount("edit-denied")).toBe(0);
    const view = (await (await call("/runs/edit-denied", { headers: auth })).json()) as RunView;
    const why = 'the edited call to fx_fetch is denied by the approval policy of worker "edit-denied" (deny_when method = "DELETE")';
    expect(view.approvals[0]).toMatchObject({ status: "approved", edited_args: { method: "DELETE" }, denied: why });
    expect(view.call_tree!.tools[0]).toMatchObject({ status: "error", edited: { args: { method: "DELETE" }, denied: why } });
    const page = await (await call("/runs/edit-denied/view", { headers: auth })).text();
    expect(page).toContain("denied after the edit: not run");
    expect(page).toContain("into arguments a deny rule refuses: not run");
    expect(page).not.toContain("it ran with:");
    expect(page).not.toContain("edited; ran with:");
  });

  it("an edit no rule refuses is not marked denied", async () => {
    const approval = await pausedRun("edit-denied", "edit-allowed");
    await api("edit-allowed", approval.id, { decision: "approve", arguments: { url: effectUrl("edit-allowed"), method: "POST", body: "edited" } });
    expect((await settle("edit-allowed")).approvals[0]).toMatchObject({ status: "approved", denied: null });
    expect(await effectBodies("edit-allowed")).toEqual(["edited"]);
  });
});

describe("answer in place of the call", () => {
  it("by API: the tool never runs; the answer is the call's result, marked as a person's; the model reads it", async () => {
    const approval = await pausedRun("edit-writer", "respond-api");
    const res = await api("respond-api", approval.id, { decision: "respond", result: "use label question instead" });
    expect(await res.json()).toEqual({ approval_id: approval.id, approved: false, status: "responded", edited: false });
    const done = await settle("respond-api");
    expect(done.status).toBe("succeeded");
    expect(await effectCount("respond-api")).toBe(0);
    expect(done.approvals[0]).toMatchObject({
      status: "responded",
      response: "use label question instead",
      by: { email: null, via: "api" },
      edited_args: null,
    });
    expect(done.call_tree!.tools[0]).toMatchObject({ status: "ok", result: "use label question instead", answeredBy: { by: { email: null, via: "api" } } });
    expect(await toolMessage("edit-writer")).toBe(
      "[A person answered in place of this call: the tool did not run. Their answer follows.]\nuse label question instead",
    );
    const events = (await stub("respond-api").eventsSince())!.events;
    expect(events.find((e) => e.type === "approval_decided")?.data).toMatchObject({ approved: false, responded: true });
    const page = await (await call("/runs/respond-api/view", { headers: auth })).text();
    expect(page).toContain("answered in place of the call: “use label question instead”");
    expect(page).toContain("not run: answered by a person (the API token (via api))");
  });
});

describe("what an edit or an answer may not be", () => {
  it("hostile requests are refused with a 400 naming the field, and change nothing", async () => {
    const approval = await pausedRun("edit-writer", "edit-hostile");
    const before = await unchanged("edit-hostile");
    const url = effectUrl("edit-hostile");
    const cases: Array<[string, unknown, RegExp]> = [
      [
        "oversized",
        { decision: "approve", arguments: { url, method: "POST", body: "x".repeat(MAX_EDIT_BYTES) } },
        /^arguments: \d+ bytes as JSON; at most 65536$/,
      ],
      [
        "an unknown field",
        { decision: "approve", arguments: { url, method: "POST", bodyy: "typo" } },
        /^arguments\.bodyy: not a field of the tool's input schema$/,
      ],
      ["a wrong type", { decision: "approve", arguments: { url, method: "POST", body: 5 } }, /^arguments\.body: /],
      ["a value off the enum", { decision: "approve", arguments: { url, method: "BREW" } }, /^arguments\.method: /],
      ["a required field left out", { decision: "approve", arguments: { method: "POST" } }, /^arguments\.url: required/],
      ["not an object", { decision: "approve", arguments: ["a"] }, /^arguments: /],
      ["null", { decision: "approve", arguments: null }, /^arguments: /],
      [
        "deeply nested",
        { decision: "approve", arguments: { url, headers: JSON.parse(`${"[".repeat(100)}${"]".repeat(100)}`) } },
        /^arguments: nested deeper than 64 levels$/,
      ],
      ["a huge result", { decision: "respond", result: "y".repeat(MAX_RESPONSE_CHARS + 1) }, /^result: 32001 characters; at most 32000$/],
      ["an empty result", { decision: "respond", result: "  " }, /^result: empty$/],
      ["respond without a result", { decision: "respond" }, /^result: respond takes the call's result as text$/],
      ["arguments with a rejection", { decision: "reject", arguments: { url } }, /^arguments: only an "approve" decision takes edited arguments$/],
      ["a result with an approval", { decision: "approve", result: "x" }, /^result: only a "respond" decision takes a result$/],
      ["arguments with respond", { decision: "respond", result: "x", arguments: { url } }, /^arguments: only an "approve" decision takes edited arguments$/],
    ];
    for (const [what, body, error] of cases) {
      const res = await api("edit-hostile", approval.id, body);
      expect(res.status, what).toBe(400);
      expect(((await res.json()) as { error: string }).error, what).toMatch(error);
    }
    // Past the body limit: refused before it is read.
    const huge = await api("edit-hostile", approval.id, { decision: "approve", arguments: { url, body: "z".repeat(1_100_000) } });
    expect(huge.status).toBe(413);
    expect(await unchanged("edit-hostile")).toEqual(before);
    // Still decidable: nothing was half-written.
    expect((await api("edit-hostile", approval.id, { decision: "approve", arguments: { url, method: "POST", body: "fine" } })).status).toBe(200);
    await settle("edit-hostile");
    expect(await effectBodies("edit-hostile")).toEqual(["fine"]);
  });

  it("a stale or replayed edit, after a decision, is refused and changes nothing", async () => {
    const approval = await pausedRun("edit-writer", "edit-stale");
    const url = effectUrl("edit-stale");
    expect((await api("edit-stale", approval.id, { decision: "approve", arguments: { url, method: "POST", body: "first" } })).status).toBe(200);
    const decided = await unchanged("edit-stale");
    for (const body of [
      { decision: "approve", arguments: { url, method: "POST", body: "first" } },
      { decision: "approve", arguments: { url, method: "POST", body: "second" } },
      { decision: "respond", result: "instead" },
      { decision: "approve" },
    ]) {
      const res = await api("edit-stale", approval.id, body);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({ error: "approval already approved" });
    }
    expect(await unchanged("edit-stale")).toEqual(decided);
    await settle("edit-stale");
    expect(await effectBodies("edit-stale")).toEqual(["first"]);
    const again = await api("edit-stale", approval.id, { decision: "approve", arguments: { url, method: "POST", body: "late" } });
    expect(again.status).toBe(409);
    expect((await stub("edit-stale").status())!.approvals[0]!.edited_args).toMatchObject({ body: "first" });
  });

  it("named approvers and the rule against the initiator apply to edits and answers as to approvals", async () => {
    const approval = await pausedRun("edit-writer", "edit-stranger");
    const before = await unchanged("edit-stranger");
    const base = { run: "edit-stranger", approval: approval.id, exp: approval.expires_at };
    const mallory = await signedLink({ ...base, to: "mallory@example.com" });
    const url = effectUrl("edit-stranger");
    const edit = { decision: "edit_json", arguments_json: JSON.stringify({ url, method: "POST", body: "mallory's" }) };
    for (const fields of [edit, { decision: "respond", result: "mallory's answer" }]) {
      const res = await post(mallory, fields);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("mallory@example.com is not among the people this approval names");
    }
    expect(await unchanged("edit-stranger")).toEqual(before);

    const fromLead = { kind: "email", name: "inbox", from: "lead@example.com", message_id: "<m1@example.com>" };
    const own = await pausedRun("edit-writer", "edit-initiator", fromLead);
    const lead = await signedLink({ run: "edit-initiator", approval: own.id, exp: own.expires_at, to: "lead@example.com" });
    const refused = await post(lead, { ...edit, arguments_json: JSON.stringify({ url: effectUrl("edit-initiator"), method: "POST", body: "mine" }) });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("the person who started this run may not decide its approvals");
    expect((await post(lead, { decision: "respond", result: "mine" })).status).toBe(403);
    expect((await stub("edit-initiator").status())!.approvals[0]!.status).toBe("pending");
    expect(await effectCount("edit-initiator")).toBe(0);
  });

  it("editable: false refuses edits and answers (API and page), and the page offers neither", async () => {
    const approval = await pausedRun("fixed-writer", "edit-fixed");
    expect(approval).toMatchObject({ editable: false, input_schema: null, deciders: { ask: ["lead@example.com", "api"] } });
    const before = await unchanged("edit-fixed");
    const url = effectUrl("edit-fixed");
    const why = "the approval policy of fx_fetch says editable: false: approve or reject the call as asked";
    for (const body of [
      { decision: "approve", arguments: { url, method: "POST", body: "edited" } },
      { decision: "respond", result: "instead" },
    ]) {
      const res = await api("edit-fixed", approval.id, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: why });
    }
    const link = await signedLink({ run: "edit-fixed", approval: approval.id, exp: approval.expires_at, to: "lead@example.com" });
    const page = await (await call(`${link}?intent=edit`)).text();
    expect(page).not.toContain("Edit the arguments");
    expect(page).not.toContain("Answer in place of the call");
    expect(page).toContain("approved or rejected as asked");
    const res = await post(link, { decision: "respond", result: "instead" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("editable: false");
    expect(await unchanged("edit-fixed")).toEqual(before);
    const [mail] = await Promise.all(sent.map(parseMail));
    expect(mail!.text).not.toContain("intent=edit");
    expect((await api("edit-fixed", approval.id, { decision: "approve" })).status).toBe(200);
    await settle("edit-fixed");
    expect(await effectBodies("edit-fixed")).toEqual(["as asked"]);
  });

  it("a budget approval binds no arguments: no edit and no answer", async () => {
    await script("edit-writer", [{ tool_calls: [{ name: "no_such_tool", arguments: {} }] }, { text: "done" }]);
    await stub("edit-budget").start({
      id: "edit-budget",
      worker: "edit-writer",
      input: { input: "go" },
      approvalMode: "ask",
      budget: { maxTokens: 10, onExceed: "ask" },
    });
    const paused = await settle("edit-budget");
    const approval = paused.approvals[0]!;
    expect(approval).toMatchObject({ tool: "continue_past_budget", editable: false, input_schema: null });
    const before = await unchanged("edit-budget");
    const why = "this approval is about the run's budget and binds no arguments: approve or reject it";
    for (const body of [
      { decision: "approve", arguments: { max_tokens: 1_000_000 } },
      { decision: "respond", result: "yes" },
    ]) {
      const res = await api("edit-budget", approval.id, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: why });
    }
    expect(await unchanged("edit-budget")).toEqual(before);
    expect((await api("edit-budget", approval.id, { decision: "approve" })).status).toBe(200);
    expect((await settle("edit-budget")).status).toBe("succeeded");
  });
});

describe("the approval page and the inbox", () => {
  it("the email links to the edit forms; the page's form is the tool's schema, filled with the asked arguments, escaped", async () => {
    await script("edit-writer", [
      { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl("edit-page"), method: "POST", body: '<script>alert(1)</script>\n"two"' } }] },
      { text: "posted" },
    ]);
    await stub("edit-page").start({
      id: "edit-page",
      worker: "edit-writer",
      input: { input: "post it" },
      approvalMode: "ask",
      budget: {},
      trigger: { kind: "api" },
    });
    await settle("edit-page");
    const mail = await parseMail(sent[0]!);
    const link = /href="(https:\/\/edgework\.test\/approvals\/[^"?]+)\?intent=edit"/.exec(mail.html!)![1]!;
    expect(mail.text).toContain(`${link}?intent=edit`);
    const res = await call(`${link}?intent=edit`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const page = await res.text();
    expect(page).not.toContain("<script");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toMatch(/<details id="edit" open="">|<details id="edit" open>/);
    expect(page).toMatch(new RegExp(`<input id="arg-0" type="text" name="arg.url" value="${effectUrl("edit-page").replace(/[.]/g, "\\.")}"`));
    expect(page).toContain('<option value="&quot;POST&quot;" selected="">POST</option>');
    expect(page).toContain('name="arg.body"');
    expect(page).toContain('name="arguments_json"');
    expect(page).toContain('name="result"');
  });

  it("POSTs from the page: fields (CRLF as written), raw JSON, an answer; a bad field is refused naming it", async () => {
    const a1 = await pausedRun("edit-writer", "edit-form");
    const link = await signedLink({ run: "edit-form", approval: a1.id, exp: a1.expires_at, to: "lead@example.com" });
    const fields = { "arg.url": effectUrl("edit-form"), "arg.method": '"POST"', "arg.body": "line one\r\nline two", "arg.headers": "", "arg.save_to": "" };
    const bad = await post(link, { decision: "edit", ...fields, "arg.headers": "{not json" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("arguments.headers: not valid JSON");
    const offEnum = await post(link, { decision: "edit", ...fields, "arg.method": '"BREW"' });
    expect(offEnum.status).toBe(400);
    expect(await offEnum.text()).toContain("arguments.method: not one of the choices");
    expect((await stub("edit-form").status())!.approvals[0]!.status).toBe("pending");
    const ok = await post(link, { decision: "edit", ...fields, note: "two lines" });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Approved with your edits");
    const done = await settle("edit-form");
    expect(done.approvals[0]).toMatchObject({
      edited_args: { url: effectUrl("edit-form"), method: "POST", body: "line one\nline two" },
      by: { email: "lead@example.com", via: "link" },
    });
    expect(await effectBodies("edit-form")).toEqual(["line one\nline two"]);
    // Sent again (a stale tab, a replayed POST): refused as decided, nothing read of it.
    const stale = await post(link, { decision: "edit", ...fields, "arg.body": "again" });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain("This approval was already approved by approval link (lead@example.com).");
    expect(await effectBodies("edit-form")).toEqual(["line one\nline two"]);

    const a2 = await pausedRun("edit-writer", "edit-json");
    const jsonLink = await signedLink({ run: "edit-json", approval: a2.id, exp: a2.expires_at, to: "lead@example.com" });
    expect((await post(jsonLink, { decision: "edit_json", arguments_json: "[1]" })).status).toBe(400);
    const raw = await post(jsonLink, { decision: "edit_json", arguments_json: JSON.stringify({ url: effectUrl("edit-json"), method: "POST", body: "raw" }) });
    expect(raw.status).toBe(200);
    await settle("edit-json");
    expect(await effectBodies("edit-json")).toEqual(["raw"]);

    const a3 = await pausedRun("edit-writer", "edit-answer");
    const answerLink = await signedLink({ run: "edit-answer", approval: a3.id, exp: a3.expires_at, to: "lead@example.com" });
    const answered = await post(answerLink, { decision: "respond", result: "not today" });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain("Answered");
    expect(await settle("edit-answer")).toMatchObject({
      approvals: [{ status: "responded", response: "not today", by: { email: "lead@example.com", via: "link" } }],
    });
    expect(await effectCount("edit-answer")).toBe(0);
    // Replayed: the same POST again decides nothing.
    expect((await post(answerLink, { decision: "respond", result: "not today" })).status).toBe(409);
  });

  it("the inbox links to the edit forms; deciding there records the inbox as the way", async () => {
    const approval = await pausedRun("edit-writer", "edit-inbox");
    // The row of this run's approval (the index learns of it a moment after the pause).
    const link = await vi.waitFor(async () => {
      const inbox = await (await call("/inbox", { headers: auth })).text();
      const row = inbox.split("<tr>").find((r) => r.includes("/runs/edit-inbox/view"));
      const edit = row && /href="(\/approvals\/[^"?]+)\?intent=edit"/.exec(row);
      expect(edit).toBeTruthy();
      return edit![1]!;
    });
    const res = await post(link, {
      decision: "edit_json",
      arguments_json: JSON.stringify({ url: effectUrl("edit-inbox"), method: "POST", body: "from the inbox" }),
    });
    expect(res.status).toBe(200);
    const done = await settle("edit-inbox");
    expect(done.approvals.find((a) => a.id === approval.id)).toMatchObject({ by: { email: null, via: "inbox" }, edited_args: { body: "from the inbox" } });
    expect(await effectBodies("edit-inbox")).toEqual(["from the inbox"]);
    // The inbox lists the decision with its audit: the call, what was done to it, who and the way, when, on which arguments.
    const decided = await vi.waitFor(async () => {
      const inbox = await (await call("/inbox", { headers: auth })).text();
      const table = /<table id="decided">([\s\S]*?)<\/table>/.exec(inbox)?.[1] ?? "";
      const row = table.split("<tr>").find((r) => r.includes("/runs/edit-inbox/view"));
      expect(row).toBeTruthy();
      return row!;
    });
    expect(decided).toContain("<code>fx_fetch</code>");
    expect(decided).toContain("approved, edited");
    expect(decided).toContain("the API token (via inbox)");
    expect(decided).toContain(`sha256:${done.approvals[0]!.args_sha256!.slice(0, 12)}`);
    expect(decided).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
  });
});

describe("edgework/client", () => {
  const client = appClient();

  it("approvals.decide edits (approve with arguments) and answers (respond); a refused edit is a BadRequestError naming the field", async () => {
    const a1 = await pausedRun("edit-writer", "edit-client");
    const url = effectUrl("edit-client");
    const bad = await client.approvals
      .decide("edit-client", a1.id, { decision: "approve", arguments: { url, method: "POST", body: 1 } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^arguments\.body: /) } });
    expect(await client.approvals.decide("edit-client", a1.id, { decision: "approve", arguments: { url, method: "POST", body: "by the client" } })).toEqual({
      approval_id: a1.id,
      approved: true,
      status: "approved",
      edited: true,
    });
    await expect(client.approvals.decide("edit-client", a1.id, { decision: "respond", result: "late" })).rejects.toBeInstanceOf(ConflictError);
    await settle("edit-client");
    expect(await effectBodies("edit-client")).toEqual(["by the client"]);
    const run = await client.runs.get("edit-client");
    expect(run.approvals[0]).toMatchObject({ edited_args: { body: "by the client" }, args: { body: "as asked" } });
    expect(run.call_tree!.tools[0]!.edited).toMatchObject({ args: { body: "by the client" } });

    const a2 = await pausedRun("edit-writer", "respond-client");
    expect(await client.approvals.decide("respond-client", a2.id, { decision: "respond", result: "answered", note: "n" })).toMatchObject({
      approved: false,
      status: "responded",
    });
    expect(await settle("respond-client")).toMatchObject({ status: "succeeded", approvals: [{ status: "responded", response: "answered", note: "n" }] });
    expect(await effectCount("respond-client")).toBe(0);
  });
});
