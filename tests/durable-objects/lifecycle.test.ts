import { sign } from "@octokit/webhooks-methods";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IoPoint } from "../../durable-objects/run/io";
import { RunLifecycle } from "../../durable-objects/run/lifecycle";
import { Sql } from "../../durable-objects/sql";
import { SOON_MS } from "../support/test-objects";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";
import { alarmOf, expectWoken, landAt, object, statusEvents } from "./interleave";

/**
 * The run's lifecycle under requests that land while its object awaits its own I/O
 * (durable-objects/run/lifecycle.ts names these tests in its invariants): each holds the
 * object at one of its io points (io.ts) and lands a request there.
 */

const DAY = 86_400_000;
/** A tool call of chat-writer that posts one counted effect. */
const effect = (name: string) => ({ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(name), method: "POST", body: name } }] });

async function chat(id: string, replies: unknown[]) {
  await script("chat-writer", replies);
  await stub(id).start({ id, worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
}

describe("a transition checks the status it starts from (invariant 1)", () => {
  it.each<IoPoint>(["alarm.index-flush", "alarm.answer-mail"])("a cancel landing in the alarm's await %s sticks: the run never runs", async (point) => {
    const id = `lc-cancel-${point}`;
    await chat(id, [effect(id), { text: "done" }]);
    const held = await landAt(id, { point }, () => stub(id).cancel());
    expect(held).toMatchObject({ reached: true, landed: { ok: true, status: "cancelled" } });
    expect(await statusEvents(id)).toEqual(["run_queued", "run_cancelled"]);
    expect((await stub(id).status())!.status).toBe("cancelled");
    // Its next alarm changes nothing: retention's comes after it.
    await runDurableObjectAlarm(object(id));
    expect(await statusEvents(id)).toEqual(["run_queued", "run_cancelled"]);
    expect(await alarmOf(id)).toBe((await stub(id).status())!.updated_at + 30 * DAY);
    expect(await effectCount(id)).toBe(0);
    expect(await modelRequests("chat-writer")).toHaveLength(0);
  });

  it("an outcome the engine reached after a cancel answered is not recorded", async () => {
    const id = "lc-cancel-outcome";
    await chat(id, [{ text: "done" }]);
    const held = await landAt(id, { point: "activation.outcome" }, () => stub(id).cancel());
    expect(held).toMatchObject({ reached: true, landed: { ok: true } });
    expect(await statusEvents(id)).toEqual(["run_queued", "run_running", "run_cancelled"]);
  });

  it("no step starts after a cancel answered: one held before its step stops there", async () => {
    const id = "lc-cancel-step";
    await chat(id, [effect(id), { text: "done" }]);
    // The second step is the tool call's (the first is the model's).
    const held = await landAt(id, { point: "activation.step", nth: 2 }, () => stub(id).cancel());
    expect(held).toMatchObject({ reached: true, landed: { ok: true } });
    expect(await effectCount(id)).toBe(0);
    expect(await statusEvents(id)).toEqual(["run_queued", "run_running", "run_cancelled"]);
  });
});

describe("a conversation's message to an ended run is answered (issue 28 item 4)", () => {
  it.each<IoPoint>(["alarm.index-flush", "alarm.answer-mail"])(
    "a message landing in an ended run's alarm (%s) is answered, never left to the retention alarm",
    async (point) => {
      const id = `lc-msg-${point}`;
      await chat(id, [{ text: "a1" }, { text: "a2" }]);
      expect(await settle(id)).toMatchObject({ status: "succeeded" });
      // Its alarm now is retention's; running it early re-arms it, and the message lands in its await.
      const held = await landAt(id, { point }, () => stub(id).sendMessage("m2"));
      expect(held).toMatchObject({ reached: true, landed: { ok: true, status: "running", message: 2 } });
      await expectWoken(id, "the message's wake-up");
      expect(await settle(id)).toMatchObject({ status: "succeeded", output: "a2" });
    },
  );

  it("a message landing while the ending activation mails its answer is answered", async () => {
    const id = "lc-msg-settle";
    await chat(id, [{ text: "a1" }, { text: "a2" }]);
    const held = await landAt(id, { point: "settle.answer-mail" }, () => stub(id).sendMessage("m2"));
    expect(held).toMatchObject({ reached: true, landed: { ok: true, status: "running", message: 2 } });
    await expectWoken(id, "the message's wake-up");
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "a2" });
  });

  it("a message to a run past its retention is refused: it is being deleted", async () => {
    const id = "lc-msg-retention";
    await chat(id, [{ text: "a1" }]);
    await settle(id);
    await runInDurableObject(object(id), (_o, state) => {
      state.storage.sql.exec("UPDATE run SET updated_at = updated_at - ?", 30 * DAY);
      state.storage.sql.exec("UPDATE events SET at = at - ?", 30 * DAY);
    });
    // Landing while retention tells the index: refused, and the run is deleted as planned.
    const held = await landAt(id, { point: "retention.retire" }, () => stub(id).sendMessage("too late"));
    expect(held).toMatchObject({ reached: true, landed: { ok: false, status: 409, error: expect.stringContaining("retention") } });
    expect(await stub(id).status()).toBeNull();
  });
});

describe("a run that ended under an older edgework (issue 28 item 5, invariant 2)", () => {
  it("a run that finished under schema version 3 refuses a message with 409, and records nothing", async () => {
    const id = "lc-legacy";
    await chat(id, [{ text: "a1" }]);
    await settle(id);
    // Objects before version 4 wrote the outcome into the run's row: RUN_CURRENT keeps that status whatever the events say.
    await runInDurableObject(object(id), (_o, state) => state.storage.sql.exec("UPDATE run SET status = 'succeeded'"));
    expect(await stub(id).sendMessage("m2")).toEqual({
      ok: false,
      status: 409,
      error: "the run ended under an older edgework, before conversations: it takes no messages; start a new run",
    });
    expect(await statusEvents(id)).toEqual(["run_queued", "run_running", "run_succeeded"]);
    expect((await stub(id).status())!.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });
});

describe("a wake-up once requested is never moved later (invariant 3)", () => {
  it("an event landing while the pause registers its waits with the wait index keeps its wake-up", async () => {
    const id = "lc-arm-event";
    await stub(id).start({ id, worker: "fn-ask-and-wait", input: { event: "go", key: "k-1" }, approvalMode: "ask", budget: {} });
    const held = await landAt(id, { point: "pause.wait-index" }, () => stub(id).deliverEvent({ name: "go", id: "ev-1", key: "k-1", payload: 1 }, true));
    expect(held).toMatchObject({ reached: true, landed: { ok: true, applied: true } });
    // Not the question's expiry a week out: the run wakes to take the event (and pauses again for the question).
    await expectWoken(id, "the event's wake-up");
    const paused = await settle(id);
    expect(paused).toMatchObject({ status: "waiting", waits: [{ kind: "question" }] });
    expect(await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", answer: "42", by: "test" })).toMatchObject({ ok: true });
    expect(await settle(id)).toMatchObject({
      status: "succeeded",
      output: { answer: { answer: "42", answered: true }, got: { status: "received", id: "ev-1" } },
    });
  });

  it("a signal that comes while the pause registers its wait (the index does not list the run yet) is taken all the same", async () => {
    const id = "lc-signal";
    await stub(id).start({ id, worker: "fn-ask-and-wait", input: { event: "ci_finished", key: "sha-lc" }, approvalMode: "ask", budget: {} });
    const body = JSON.stringify({ action: "completed", check_suite: { head_sha: "sha-lc", conclusion: "success" } });
    const signal = async () =>
      exports.default.fetch(
        new Request("https://edgework.test/hooks/ci-signal", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "X-Hub-Signature-256": await sign("It's a Secret to Everybody", body),
            "X-GitHub-Delivery": "gh-lc-1",
          },
          body,
        }),
      );
    const held = await landAt(id, { point: "pause.wait-index" }, async () => (await signal()).json());
    // No run was listed for it yet: the index kept it, and handed it over with the registration.
    expect(held).toMatchObject({ reached: true, landed: { signal: "ci_finished", woken: 0 } });
    await expectWoken(id, "the signal's wake-up");
    const paused = await settle(id);
    expect(paused).toMatchObject({ status: "waiting", waits: [{ kind: "question" }] });
    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", answer: "42", by: "test" });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { got: { status: "received", payload: { check_suite: { head_sha: "sha-lc" } } } } });
  });

  it("a second alarm while one runs only asks for a wake-up after it (invariant 5): one activation, each effect once", async () => {
    const id = "lc-two-alarms";
    await chat(id, [effect(id), { text: "done" }]);
    const held = await landAt(id, { point: "alarm.index-flush" }, async () => {
      await stub(id).resume(); // arms an alarm for the helper to run
      return runDurableObjectAlarm(object(id));
    });
    expect(held).toMatchObject({ reached: true, landed: true });
    expect(await alarmOf(id)).toBeLessThanOrEqual(Date.now() + SOON_MS);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "done" });
    expect(await statusEvents(id)).toEqual(["run_queued", "run_running", "run_succeeded"]);
    expect(await effectCount(id)).toBe(1);
    expect(await modelRequests("chat-writer")).toHaveLength(2);
  });
});

describe("the alarm rule, one writer at a time (RunLifecycle's wake and arm)", () => {
  /** A lifecycle over a bare object's storage: its alarm as written, nothing pulling it forward. */
  const withLifecycle = (name: string, fn: (l: RunLifecycle, storage: DurableObjectStorage) => Promise<void>) =>
    runInDurableObject(object(name), (_o, state) => {
      const host = { ctx: state, sql: new Sql(state.storage.sql), event: () => {}, row: () => undefined };
      const lifecycle = new RunLifecycle(
        host,
        { voidPending: () => {} },
        { store: (at) => state.storage.setAlarm(at), clamp: (at) => at },
        { takeWaitingMessage: () => undefined, outcome: () => {}, cancelling: () => {} },
      );
      return fn(lifecycle, state.storage);
    });
  const t = Date.now() + DAY;

  it("a deadline never moves a wake-up later; an alarm that starts consumes the wake-ups before it (invariants 3, 4)", async () => {
    await withLifecycle("lc-rule-deadline", async (lifecycle, storage) => {
      expect(lifecycle.alarmStarting()).toBe(true);
      await lifecycle.wake(t);
      await lifecycle.arm(t + 60_000); // a pause's deadline after it
      expect(await storage.getAlarm()).toBe(t);
      await lifecycle.arm(t - 60_000); // one before it
      expect(await storage.getAlarm()).toBe(t - 60_000);
      await lifecycle.wake(t + 120_000); // a later wake-up brings nothing forward
      expect(await storage.getAlarm()).toBe(t - 60_000);
      lifecycle.alarmEnded(false);
      // The next alarm serves what was asked before it: its deadline is its own.
      expect(lifecycle.alarmStarting()).toBe(true);
      await lifecycle.arm(t + 60_000);
      expect(await storage.getAlarm()).toBe(t + 60_000);
      lifecycle.alarmEnded(false);
    });
  });

  it("an alarm that throws forgets the alarm it knew: the next wake-up is written, whatever the runtime did with the alarm (invariant 4)", async () => {
    await withLifecycle("lc-rule-throw", async (lifecycle, storage) => {
      expect(lifecycle.alarmStarting()).toBe(true);
      await lifecycle.wake(t);
      lifecycle.alarmEnded(true);
      // The runtime owns the alarm of a handler that threw (it retries it; a test's helper deleted it).
      await storage.deleteAlarm();
      await lifecycle.wake(t + 60_000);
      expect(await storage.getAlarm()).toBe(t + 60_000);
    });
  });

  it("a second alarm while one runs is not started (invariant 5)", async () => {
    await withLifecycle("lc-rule-overlap", async (lifecycle) => {
      expect(lifecycle.alarmStarting()).toBe(true);
      expect(lifecycle.alarmStarting()).toBe(false);
      lifecycle.alarmEnded(false);
      expect(lifecycle.alarmStarting()).toBe(true);
      lifecycle.alarmEnded(false);
    });
  });
});
