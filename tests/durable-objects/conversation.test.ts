import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_HISTORY_BYTES, MAX_MESSAGE_CHARS, MAX_MESSAGES } from "../../durable-objects/run/conversation";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";
import { statusEvents } from "./interleave";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const postMessage = (id: string, body: unknown) =>
  exports.default.fetch(new Request(`https://edgework.test/runs/${id}/messages`, { method: "POST", headers: auth, body: JSON.stringify(body) }));

/** A tool call of the fixture that posts one counted effect. */
const effect = (name: string) => ({ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(name), method: "POST", body: name } }] });

async function startChat(id: string, input = "m1", worker = "chat-writer") {
  await stub(id).start({ id, worker, input: { input }, approvalMode: "ask", budget: {} });
  return settle(id);
}

async function send(id: string, text: string) {
  const sent = await stub(id).sendMessage(text);
  expect(sent, `message "${text.slice(0, 20)}"`).toMatchObject({ ok: true, status: "running" });
  return settle(id);
}

type SentMessage = { role: string; content: string | null; tool_calls?: unknown[] };
const messagesOf = (request: unknown) => (request as { messages: SentMessage[] }).messages;

describe("a conversation with a finished run (POST /runs/:id/messages)", () => {
  it("five messages keep one history: the model gets all of it each time, usage is summed, each effect runs once", async () => {
    await script("chat-writer", [effect("chat-c1"), { text: "a1" }, { text: "a2" }, effect("chat-c3"), { text: "a3" }, { text: "a4" }, { text: "a5" }]);
    expect(await startChat("chat-five")).toMatchObject({ status: "succeeded", output: "a1" });
    for (const n of [2, 3, 4, 5]) {
      const res = await postMessage("chat-five", { text: `m${n}` });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ id: "chat-five", status: "running", message: n });
      expect((await stub("chat-five").status())!.status).toBe("running");
      expect(await settle("chat-five")).toMatchObject({ status: "succeeded", output: `a${n}` });
    }
    const requests = (await modelRequests("chat-writer")).map(messagesOf);
    expect(requests).toHaveLength(7);
    // One history: each request is the one before, its answer, and what came after it.
    for (let i = 1; i < requests.length; i++) expect(requests[i]!.slice(0, requests[i - 1]!.length), `request ${i + 1}`).toEqual(requests[i - 1]);
    const last = requests.at(-1)!;
    expect(last.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["m1", "m2", "m3", "m4", "m5"]);
    expect(last.filter((m) => m.role === "assistant" && !m.tool_calls?.length).map((m) => m.content)).toEqual(["a1", "a2", "a3", "a4"]);
    expect(last.filter((m) => m.role === "tool")).toHaveLength(2);
    expect(await effectCount("chat-c1")).toBe(1);
    expect(await effectCount("chat-c3")).toBe(1);

    const view = (await stub("chat-five").status())!;
    // The fake model counts 10 input and 5 output tokens a request.
    expect(view.usage).toMatchObject({ requests: 7, inputTokens: 70, outputTokens: 35 });
    expect(view.call_tree).toMatchObject({ worker: "chat-writer", turns: 7 });
    expect(view.call_tree!.tools.map((t) => t.status)).toEqual(["ok", "ok"]);
    expect(view.messages.map((m) => `${m.role}:${m.text}`)).toEqual([1, 2, 3, 4, 5].flatMap((n) => [`user:m${n}`, `assistant:a${n}`]));
    expect(view.messages.every((m) => typeof m.at === "number")).toBe(true);
  });

  for (const mode of ["abort", "throw"] as const) {
    it(`interrupted (${mode}) before each step of a later message: no step of the conversation runs twice`, async () => {
      // Steps before the second message: the first answer (1), then the message (2); it adds a model step, a tool result, a model step.
      for (let k = 2; k <= 4; k++) {
        const id = `chat-evict-${mode}-${k}`;
        await script("chat-writer", [{ text: "a1" }, effect(`${id}-e2`), { text: "a2" }]);
        expect(await startChat(id)).toMatchObject({ status: "succeeded", output: "a1" });
        await stub(id).setTestHooks({ fault: { atJournalSize: k, mode } });
        const count = { activations: 0, failed: 0 };
        expect((await stub(id).sendMessage("m2")).ok).toBe(true);
        expect(await settle(id, { count }), `interrupted at ${k}`).toMatchObject({ status: "succeeded", output: "a2" });
        expect(count.failed, `interrupted at ${k}`).toBe(1);
        expect(await effectCount(`${id}-e2`), `effect, interrupted at ${k}`).toBe(1);
        expect(await modelRequests("chat-writer"), `model requests, interrupted at ${k}`).toHaveLength(3);
      }
    });
  }

  it("a message while the run works waits its turn: taken after its answer and answered next; two at once are both answered, once each", async () => {
    await script("chat-writer", [{ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "a4" }]);
    await stub("chat-busy").start({ id: "chat-busy", worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
    expect(await stub("chat-busy").sendMessage("early", "early-id")).toEqual({ ok: true, status: "queued", message: 2, waiting: true });
    // The same id again: the message waiting, nothing new.
    expect(await stub("chat-busy").sendMessage("early", "early-id")).toMatchObject({ ok: true, message: 2, duplicate: true, waiting: true });
    expect(await settle("chat-busy")).toMatchObject({ status: "succeeded", output: "a2" });
    const users = async () => (await stub("chat-busy").status())!.messages.filter((m) => m.role === "user").map((m) => m.text);
    expect(await users()).toEqual(["m1", "early"]);
    // Its own turn: the answer to the input is recorded before the message is taken (one run_succeeded each).
    expect(await statusEvents("chat-busy")).toEqual(["run_queued", "run_running", "run_succeeded", "run_running", "run_succeeded"]);
    // Two stubs: either reaches the object first; the one after finds it running and waits.
    const answers = await Promise.all(["m3", "m3 again"].map((t) => stub("chat-busy").sendMessage(t)));
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(answers.filter((a) => a.ok && a.waiting)).toHaveLength(1);
    expect(await settle("chat-busy")).toMatchObject({ status: "succeeded", output: "a4" });
    expect((await users()).slice(2).sort()).toEqual(["m3", "m3 again"]);
    expect(await modelRequests("chat-writer")).toHaveLength(4);
  });

  it("messages waiting when the run fails or is cancelled are dropped, with an event naming them", async () => {
    await script("chat-writer", [{ text: "a1" }]);
    await stub("chat-drop").start({ id: "chat-drop", worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
    expect(await stub("chat-drop").sendMessage("m2")).toMatchObject({ ok: true, waiting: true, message: 2 });
    expect(await stub("chat-drop").sendMessage("m3")).toMatchObject({ ok: true, waiting: true, message: 3 });
    expect(await stub("chat-drop").cancel()).toMatchObject({ ok: true });
    const events = (await stub("chat-drop").eventsSince("0-0", 100))!.events;
    expect(events.find((e) => e.type === "messages_dropped")?.data).toEqual({ messages: [2, 3], reason: "the run was cancelled before answering them" });
    expect(await modelRequests("chat-writer")).toHaveLength(0);
  });

  it("the run's budget counts every message: one over it fails the run, which then takes no more", async () => {
    await script("chat-writer", [{ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "never" }]);
    // 15 tokens a request: the third message's request starts at 30 of 40, the fourth finds the run over it.
    await stub("chat-budget").start({ id: "chat-budget", worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: { maxTokens: 40 } });
    await settle("chat-budget");
    await send("chat-budget", "m2");
    expect(await send("chat-budget", "m3")).toMatchObject({ status: "succeeded", output: "a3", usage: { inputTokens: 30, outputTokens: 15 } });
    expect(await send("chat-budget", "m4")).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
    expect(await modelRequests("chat-writer")).toHaveLength(3);
    expect(await stub("chat-budget").sendMessage("m5")).toMatchObject({ ok: false, status: 409 });
  });

  it("the run page shows the conversation, a message's markup as text", async () => {
    await script("chat-writer", [{ text: "a1" }, { text: "a2" }]);
    await startChat("chat-page");
    const page = async () => (await exports.default.fetch(new Request("https://edgework.test/runs/chat-page/view", { headers: auth }))).text();
    expect(await page()).not.toContain("<h2>Conversation</h2>");
    await send("chat-page", '<img src=x onerror="alert(1)">');
    const html = await page();
    expect(html).toContain("<h2>Conversation</h2>");
    expect(html).toContain("&lt;img src=x onerror=");
    expect(html).not.toContain("<img src=x");
    expect(html.indexOf("m1")).toBeLessThan(html.indexOf("&lt;img"));
    expect(html.indexOf("&lt;img")).toBeLessThan(html.lastIndexOf("a2"));
  });

  it("a message sent twice with one id is one message: the repeat answers 202 duplicate, also while the run answers", async () => {
    await script("chat-writer", [{ text: "a1" }, { text: "a2" }]);
    await startChat("chat-id");
    const first = await postMessage("chat-id", { text: "m2", id: "client-msg-1" });
    expect(await first.json()).toEqual({ id: "chat-id", status: "running", message: 2 });
    const again = await postMessage("chat-id", { text: "m2", id: "client-msg-1" });
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ id: "chat-id", status: "running", message: 2, duplicate: true });
    await settle("chat-id");
    expect(await (await postMessage("chat-id", { text: "m2", id: "client-msg-1" })).json()).toMatchObject({ status: "succeeded", duplicate: true });
    expect((await stub("chat-id").status())!.messages.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["m1", "m2"]);
    expect((await postMessage("chat-id", { text: "m3", id: "no spaces allowed" })).status).toBe(400);
  });

  it("hostile texts: empty, not a string, over the length bound; an unknown run is 404, no token 401", async () => {
    await script("chat-writer", [{ text: "a1" }]);
    await startChat("chat-hostile");
    expect(await stub("chat-hostile").sendMessage("  ")).toMatchObject({ ok: false, status: 400 });
    expect((await postMessage("chat-hostile", { text: 42 })).status).toBe(400);
    expect((await postMessage("chat-hostile", { text: "hi", extra: 1 })).status).toBe(400);
    const long = await postMessage("chat-hostile", { text: "x".repeat(MAX_MESSAGE_CHARS + 1) });
    expect(long.status).toBe(413);
    expect(((await long.json()) as { error: string }).error).toContain(`over ${MAX_MESSAGE_CHARS}`);
    expect((await postMessage("chat-no-such-run", { text: "hi" })).status).toBe(404);
    expect((await postMessage("bad id!", { text: "hi" })).status).toBe(404);
    const anonymous = await exports.default.fetch(
      new Request("https://edgework.test/runs/chat-hostile/messages", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"text":"hi"}',
      }),
    );
    expect(anonymous.status).toBe(401);
    // Nothing refused reached the run.
    expect((await stub("chat-hostile").status())!).toMatchObject({ status: "succeeded", messages: [{ text: "m1" }, { text: "a1" }] });
  });

  it(`at most ${MAX_MESSAGES} messages after the input; the next is refused (409)`, async () => {
    await script(
      "chat-writer",
      Array.from({ length: MAX_MESSAGES + 1 }, (_, i) => ({ text: `a${i + 1}` })),
    );
    await startChat("chat-many");
    for (let n = 2; n <= MAX_MESSAGES + 1; n++) await send("chat-many", `m${n}`);
    expect(await stub("chat-many").sendMessage("one more")).toMatchObject({
      ok: false,
      status: 409,
      error: expect.stringContaining(`${MAX_MESSAGES} messages`),
    });
    expect((await stub("chat-many").status())!).toMatchObject({ status: "succeeded", output: `a${MAX_MESSAGES + 1}` });
  }, 120_000);

  it("a history over its bound takes no more messages (413)", async () => {
    // Answers near the bound of one step: the journal passes its bound after `answers` of them.
    const big = "y".repeat(1_400_000);
    const answers = Math.ceil(MAX_HISTORY_BYTES / big.length);
    await script("chat-writer", [...Array.from({ length: answers }, () => ({ text: big })), { text: "never" }]);
    await startChat("chat-long");
    for (let n = 2; n <= answers; n++) await send("chat-long", `m${n}`);
    expect(await stub("chat-long").sendMessage("one more")).toMatchObject({ ok: false, status: 413, error: expect.stringContaining("start a new run") });
    expect(await modelRequests("chat-writer")).toHaveLength(answers);
  }, 120_000);

  it("a run that failed, was cancelled, or whose root is a code function takes no message (409)", async () => {
    await script("chat-writer", [effect("chat-f1"), effect("chat-f2"), effect("chat-f3")]);
    expect(await startChat("chat-failed")).toMatchObject({ status: "failed", error: { code: "max_turns" } });
    expect(await stub("chat-failed").sendMessage("again")).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("failed") });

    await stub("chat-cancelled").start({ id: "chat-cancelled", worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
    await stub("chat-cancelled").cancel();
    expect(await stub("chat-cancelled").sendMessage("again")).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("cancelled") });

    await stub("chat-fn").start({ id: "chat-fn", worker: "fn-shout", input: { kind: "opened" }, approvalMode: "ask", budget: {} });
    expect(await settle("chat-fn")).toMatchObject({ status: "succeeded" });
    expect(await stub("chat-fn").sendMessage("again")).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("code function") });
  });
});
