import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { MAX_ANSWER_CHARS } from "../../src/engine/approvals/ask-human";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { captureMail, deliver, parseMail, replyTo } from "../email/support";
import { BadRequestError, ConflictError } from "../../src/client";
import { appClient } from "../client/app-client";
import { files as workerFiles } from "../../src/edgework.generated";
import { redeploy } from "../support/redeploy";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const answerApi = (id: string, qid: string, body: unknown) =>
  call(`/runs/${id}/questions/${qid}`, { method: "POST", headers: auth, body: JSON.stringify(body) });
const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());
const postForm = (url: string, fields: Record<string, string>) =>
  call(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => {
  vi.restoreAllMocks();
  redeploy();
});

/**
 * An asker run paused at its question (`args`: the model's call of people_ask): `waiting`,
 * since a question ends by itself (answered, or expired as "no answer"), listed in `waits`.
 */
async function asked(id: string, args: Record<string, unknown> = { question: "Which order do you mean: 41 or 42?", to: "lead@example.com" }) {
  await script("asker", [{ tool_calls: [{ id: "q", name: "people_ask", arguments: args }] }, { text: "reported" }]);
  await stub(id).start({ id, worker: "asker", input: { input: "go" }, approvalMode: "approve_all", budget: {} });
  const view = await settle(id);
  expect(view.status).toBe("waiting");
  const q = view.approvals[0]!;
  expect(view.waits).toEqual([expect.objectContaining({ id: q.id, kind: "question", name: q.id, expires_at: q.expires_at })]);
  return q;
}

const ASKER = "tests/fixtures/workers/asker.worker";
const MIN = 60_000;

/** Deploys an asker that can also post (fx_fetch, asks for approval) and sleep (the `wait` kind). */
function askerThatPostsAndSleeps(): void {
  const asker = workerFiles[ASKER]!.replace('"toolsets":{', '"toolsets":{"fx":{"use":"http","allow":["${FAKE_OPENAI_HOST}"]},"wait":{"use":"wait"},');
  expect(asker).toContain('"fx":{');
  redeploy({ files: { ...workerFiles, [ASKER]: asker } });
}

const askCall = { id: "q", name: "people_ask", arguments: { question: "Which order: 41 or 42?", to: "lead@example.com" } };

/** What the model was told the tool returned, as it read it. */
async function toolResult(): Promise<string> {
  const last = (await modelRequests("asker")).at(-1) as { messages: Array<{ role: string; content: string }> };
  return last.messages.at(-1)!.content;
}

describe("questions to people (the human kind, ctx.askHuman)", () => {
  it("the question is emailed to `to` with a link to an answer page; the answer is the tool's result, with who answered; a second answer is refused", async () => {
    const q = await asked("question-page");
    // Not decided by approval_mode approve_all: only a person answers.
    expect(q).toMatchObject({ kind: "question", tool: "ask_human", description: "Which order do you mean: 41 or 42?", status: "pending", answer: null });
    expect(sent.map((m) => m.to)).toEqual(["lead@example.com"]);
    const mail = await parseMail(sent[0]!);
    expect(mail.subject).toBe("Question from asker: Which order do you mean: 41 or 42?");
    expect(mail.text).toContain("Which order do you mean: 41 or 42?");
    expect(mail.text).toContain("the first paragraph of your reply is the answer");
    const link = /Answer: (https:\/\/edgework\.test\/approvals\/\S+)/.exec(mail.text!)![1]!;

    const page = await (await call(link)).text();
    expect(page).toContain('<textarea name="answer"');
    expect(page).not.toContain('value="approve"');
    expect((await postForm(link, { answer: "  " })).status).toBe(400);
    const answered = await postForm(link, { answer: "42, the <b>blue</b> one" });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain("The run continues with your answer");

    const done = await settle("question-page");
    expect(done).toMatchObject({
      status: "succeeded",
      approvals: [{ kind: "question", status: "approved", answer: "42, the <b>blue</b> one", by: { email: "lead@example.com", via: "link" } }],
    });
    expect(JSON.parse(await toolResult())).toEqual({ answer: "42, the <b>blue</b> one", by: "lead@example.com" });
    expect((await postForm(link, { answer: "41" })).status).toBe(409);
    expect((await answerApi("question-page", q.id, { answer: "41" })).status).toBe(409);
  });

  it("by API: answered once (a second answer 409); bounded; an approval is not answered nor a question approved", async () => {
    const q = await asked("question-api");
    const bad: Array<[unknown, number]> = [
      [{ answer: "" }, 400],
      [{ answer: "   " }, 400],
      [{ answer: "x".repeat(MAX_ANSWER_CHARS + 1) }, 400],
      [{ answer: 42 }, 400],
      [{ answer: "ok", extra: 1 }, 400],
    ];
    for (const [body, status] of bad) expect((await answerApi("question-api", q.id, body)).status, JSON.stringify(body).slice(0, 40)).toBe(status);
    const approve = await call(`/runs/question-api/approvals/${q.id}`, { method: "POST", headers: auth, body: JSON.stringify({ decision: "approve" }) });
    expect(approve.status).toBe(400);
    expect(await approve.json()).toEqual({ error: "this is a question: answer it with text" });
    expect((await stub("question-api").status())!.approvals[0]!.status).toBe("pending");

    const ok = await answerApi("question-api", q.id, { answer: "x".repeat(MAX_ANSWER_CHARS) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ question_id: q.id, answered: true });
    expect((await answerApi("question-api", q.id, { answer: "again" })).status).toBe(409);
    expect(await settle("question-api")).toMatchObject({
      status: "succeeded",
      approvals: [{ answer: "x".repeat(MAX_ANSWER_CHARS), by: { email: null, via: "api" } }],
    });
  });

  it("edgework/client answers a question once; a second answer is a ConflictError, an empty one a BadRequestError", async () => {
    const q = await asked("question-client");
    const client = appClient();
    expect(await client.approvals.answer("question-client", q.id, "").catch((e: unknown) => e)).toBeInstanceOf(BadRequestError);
    expect(await client.approvals.answer("question-client", q.id, "41, the red one")).toEqual({ question_id: q.id, answered: true });
    expect(await client.approvals.answer("question-client", q.id, "42").catch((e: unknown) => e)).toBeInstanceOf(ConflictError);
    expect(await settle("question-client")).toMatchObject({ status: "succeeded", approvals: [{ answer: "41, the red one" }] });
  });

  it("by reply: the first paragraph is the answer; a reply from an address it was not sent to is refused", async () => {
    await asked("question-reply");
    const mail = await parseMail(sent[0]!);
    const address = mail.replyTo![0]!.address!;
    expect(await deliver("mallory@example.com", address, replyTo(mail, "mallory@example.com", address, "41"))).toEqual([
      "the reply does not come from an address this approval was emailed to",
    ]);
    expect(await deliver("lead@example.com", address, replyTo(mail, "lead@example.com", address, "\nOrder 42,\nthe big one.\n\nThanks, Lead"))).toEqual([]);
    expect(await settle("question-reply")).toMatchObject({
      status: "succeeded",
      approvals: [{ answer: "Order 42,\nthe big one.", by: { email: "lead@example.com", via: "reply" } }],
    });
  });

  it("unanswered, the question expires as no answer: the model is told", async () => {
    const q = await asked("question-expiry");
    // `waiting` on a question holds one alarm: its expiry.
    expect(await alarmOf("question-expiry")).toBe(q.expires_at);
    await runInDurableObject(env.RUNS.getByName("question-expiry"), (_o, state) =>
      state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, q.id),
    );
    await runDurableObjectAlarm(env.RUNS.getByName("question-expiry"));
    expect(await settle("question-expiry")).toMatchObject({ status: "succeeded", approvals: [{ status: "expired", answer: null }] });
    expect(JSON.parse(await toolResult())).toEqual({ answer: null, note: "no answer: nobody answered before the question expired" });
  });

  it("a question the model wrote cannot add headers to the email: CR and control characters never reach the Subject", async () => {
    await asked("question-headers", { question: "Which order?\rBcc: mallory@evil.test\r\nX-Evil: 1\nsecond line", to: "lead@example.com" });
    const mail = await parseMail(sent[0]!);
    expect(mail.subject).toBe("Question from asker: Which order? Bcc: mallory@evil.test");
    expect(mail.bcc ?? []).toEqual([]);
    expect(mail.headers.map((h) => h.key)).not.toContain("x-evil");
    expect(mail.text).toContain("second line");
  });

  it("the model may address only the addresses the toolset names; the question is bounded", async () => {
    await script("asker", [
      { tool_calls: [{ id: "q", name: "people_ask", arguments: { question: "Wire me money?", to: "mallory@evil.test" } }] },
      { tool_calls: [{ id: "q2", name: "people_ask", arguments: { question: "Which?", to: "Lead@Example.com\u200b" } }] },
      { tool_calls: [{ id: "q3", name: "people_ask", arguments: { question: "x".repeat(4001) } }] },
      { text: "gave up" },
    ]);
    await stub("question-to").start({ id: "question-to", worker: "asker", input: { input: "go" }, approvalMode: "ask", budget: {} });
    expect(await settle("question-to")).toMatchObject({ status: "succeeded", output: "gave up", approvals: [] });
    const requests = (await modelRequests("asker")) as Array<{ messages: Array<{ content: string }> }>;
    expect(requests.at(-3)!.messages.at(-1)!.content).toBe('Error: cannot ask "mallory@evil.test": ask one of lead@example.com');
    expect(requests.at(-2)!.messages.at(-1)!.content).toMatch(/^Error: cannot ask/);
    expect(requests.at(-1)!.messages.at(-1)!.content).toMatch(/^Error: invalid arguments for ask: question: Too big/);
    expect(sent).toHaveLength(0);
  });

  it("a question to one person is emailed to that person only, not to everyone else the toolset names", async () => {
    const asker = workerFiles[ASKER]!.replace('"ask":["lead@example.com",', '"ask":["lead@example.com","cfo@example.com",');
    expect(asker).toContain("cfo@example.com");
    redeploy({ files: { ...workerFiles, [ASKER]: asker } });
    await asked("question-one", { question: "Is the invoice to ACME paid?", to: "cfo@example.com" });
    expect(sent.map((m) => m.to)).toEqual(["cfo@example.com"]);
  });
});

describe("a run paused only on questions is `waiting` (a question ends by itself, like a timer)", () => {
  it("everywhere it is shown: the API and edgework/client (a `question` wait), the index filter, the inbox, the run page and the log line", async () => {
    const id = "question-surfaces";
    const log = vi.spyOn(console, "log");
    const q = await asked(id);
    const run = await appClient().runs.get(id);
    expect(run.status).toBe("waiting");
    expect(run.waits).toEqual([
      {
        id: q.id,
        kind: "question",
        name: q.id,
        expires_at: q.expires_at,
        reason: "Which order do you mean: 41 or 42?",
        call_path: q.call_path,
        worker_chain: ["asker"],
        created_at: q.created_at,
      },
    ]);
    // The log line names the question by its id, never its text.
    const paused = log.mock.calls.map((c) => String(c[0])).find((l) => l.includes(`"run_id":"${id}"`) && l.includes('"run_waiting"'));
    expect(JSON.parse(paused!)).toMatchObject({ edgework: "run_waiting", status: "waiting", waiting_for: [{ kind: "question", name: q.id }] });
    expect(paused).not.toContain("Which order");

    const listed = async (status: string) =>
      ((await (await call(`/runs?status=${status}`, { headers: auth })).json()) as { runs: Array<{ id: string }> }).runs.map((r) => r.id);
    await expect.poll(() => listed("waiting")).toContain(id);
    expect(await listed("awaiting_approval")).not.toContain(id);

    // The inbox lists the open question to answer (with the approvals), and the run among the waiting ones.
    const inbox = await (await call("/inbox", { headers: auth })).text();
    const pending = inbox.slice(inbox.indexOf('<table id="pending">'), inbox.indexOf("</table>", inbox.indexOf('<table id="pending">')));
    expect(pending).toContain("<code>ask_human</code>");
    expect(pending).toContain(`/runs/${id}/view`);
    const waiting = inbox.slice(inbox.indexOf('<table id="waiting">'), inbox.indexOf("</table>", inbox.indexOf('<table id="waiting">')));
    expect(waiting).toContain(`/runs/${id}/view`);
    expect(waiting).toContain("an answer");

    const page = await (await call(`/runs/${id}/view`, { headers: auth })).text();
    expect(page).toContain('class="badge waiting"');
    expect(page).toContain("Waiting for");
    expect(page).toContain("expires ");

    // The timeline shows the pause, open while it waits.
    expect((await stub(id).status())!.timeline.spans.at(-1)).toMatchObject({ kind: "pause", label: "waiting", open: true });
    // Answered through edgework/client by the wait's name: the run goes on.
    expect(await appClient().approvals.answer(id, run.waits[0]!.name!, "42")).toEqual({ question_id: q.id, answered: true });
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", waits: [] });
    expect(done.timeline.spans.find((s) => s.kind === "pause")).toMatchObject({ label: "waiting" });
    expect(done.timeline.spans.find((s) => s.kind === "pause")!.open).toBeUndefined();
  });

  it("hostile: a question-only `waiting` run is not woken early by resume, an event named like its question, or another run's answer", async () => {
    const id = "question-hostile-wake";
    const q = await asked(id);
    const other = await asked("question-hostile-other");
    expect(other.id).toBe(q.id); // ids are derived from the key: the same path in two runs
    const alarm = await alarmOf(id);
    expect(alarm).toBe(q.expires_at);

    const resume = await call(`/runs/${id}/resume`, { method: "POST", headers: auth });
    expect(resume.status).toBe(409);
    expect(((await resume.json()) as { error: string }).error).toContain("waits for a person to answer");
    const event = await call(`/runs/${id}/events/${q.id}`, { method: "POST", headers: auth, body: JSON.stringify({ payload: { answer: "41" } }) });
    expect(await event.json()).toMatchObject({ applied: false, buffered: true });
    // Answering the other run's question (same id) answers that run only.
    expect((await answerApi("question-hostile-other", q.id, { answer: "42" })).status).toBe(200);
    await settle("question-hostile-other");
    const requests = (await modelRequests("asker")).length;

    const view = (await stub(id).status())!;
    expect(view).toMatchObject({ status: "waiting", approvals: [{ status: "pending" }], waits: [{ kind: "question", name: q.id }] });
    expect(await alarmOf(id)).toBe(alarm);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect((await stub(id).status())!.status).toBe("waiting");
    expect(await modelRequests("asker")).toHaveLength(requests);
  });

  it("an approval and a question pending together: `awaiting_approval`, listing the question; approved, the question alone leaves it `waiting`", async () => {
    const id = "question-mixed";
    askerThatPostsAndSleeps();
    await script("asker", [{ tool_calls: [{ id: "p", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }, askCall] }, { text: "done" }]);
    await stub(id).start({ id, worker: "asker", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const first = await settle(id);
    const approval = first.approvals.find((a) => a.kind === "approval")!;
    const q = first.approvals.find((a) => a.kind === "question")!;
    expect(first).toMatchObject({ status: "awaiting_approval", waits: [{ kind: "question", name: q.id, expires_at: q.expires_at }] });
    expect(approval).toMatchObject({ tool: "fx_fetch", status: "pending" });
    // The resume control names what holds it: a person's decision.
    expect(await stub(id).resume()).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("waits for a human to decide") });

    expect((await stub(id).decide(approval.id, { decision: "approve", by: "test" })).ok).toBe(true);
    const second = await settle(id);
    expect(second).toMatchObject({ status: "waiting", waits: [{ kind: "question", name: q.id }] });
    expect(await effectCount(id)).toBe(1);
    expect(await stub(id).resume()).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("waits for a person to answer") });

    expect((await answerApi(id, q.id, { answer: "41" })).status).toBe(200);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "done", waits: [] });
    expect(await effectCount(id)).toBe(1);
    expect(await modelRequests("asker")).toHaveLength(2);
  });

  it("one alarm at the earliest of a question's expiry and a sleep; the question then expires under `waiting` and the run continues with no answer", async () => {
    const id = "question-sleep";
    askerThatPostsAndSleeps();
    await script("asker", [{ tool_calls: [askCall, { id: "s", name: "sleep", arguments: { duration: "20m", reason: "deploy" } }] }, { text: "done" }]);
    await stub(id).start({ id, worker: "asker", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const first = await settle(id);
    expect(first.status).toBe("waiting");
    expect(first.waits.map((w) => w.kind).sort()).toEqual(["question", "sleep"]);
    const sleep = first.waits.find((w) => w.kind === "sleep")!;
    expect(await alarmOf(id)).toBe(sleep.until);

    await stub(id).advanceClock(20 * MIN);
    const slept = await settle(id);
    const q = slept.approvals[0]!;
    expect(slept).toMatchObject({ status: "waiting", waits: [{ kind: "question", name: q.id }] });
    expect(await alarmOf(id)).toBe(q.expires_at);
    expect(await modelRequests("asker")).toHaveLength(1);

    await runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
      state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, q.id),
    );
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "done", waits: [], approvals: [{ status: "expired" }] });
    const tools = ((await modelRequests("asker")).at(-1) as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.content)).toEqual([
      JSON.stringify({ answer: null, note: "no answer: nobody answered before the question expired" }),
      "slept 20m",
    ]);
  });

  it("evicted before each step in turn while asking and after the answer: resumed, no step repeats (one email, two model requests)", async () => {
    // The asker's journal: the model's question, its email, the answer, the tool's result, the model's report.
    for (let k = 0; k <= 4; k++) {
      const id = `question-evict-${k}`;
      sent.length = 0;
      await script("asker", [{ tool_calls: [askCall] }, { text: "reported" }]);
      await stub(id).start({ id, worker: "asker", input: { input: "go" }, approvalMode: "ask", budget: {} });
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: "abort" } });
      const count = { activations: 0, failed: 0 };
      const view = await settle(id, { count });
      expect(view.status, `asked at ${k}`).toBe("waiting");
      expect((await answerApi(id, view.approvals[0]!.id, { answer: `answer ${k}` })).status).toBe(200);
      expect(await settle(id, { count }), `evicted at ${k}`).toMatchObject({ status: "succeeded", output: "reported" });
      expect(count.failed, `the fault fired once at ${k}`).toBe(1);
      expect(sent, `emails at ${k}`).toHaveLength(1);
      expect(await modelRequests("asker"), `model requests at ${k}`).toHaveLength(2);
    }
  });
});
