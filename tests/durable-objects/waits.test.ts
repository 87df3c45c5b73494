import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_EVENT_DEPTH } from "../../src/runs/events";
import type { RunView } from "../../src/runs/types";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";

const object = (id: string) => env.RUNS.getByName(id);
const alarmOf = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());
const MIN = 60_000;

/** fn-sleeper's three posts, as counted by the fake server. */
const posts = async (id: string) => [await effectCount(`${id}-1`), await effectCount(`${id}-2`), await effectCount(`${id}-3`)];

async function startSleeper(id: string, key?: string): Promise<RunView> {
  await stub(id).start({ id, worker: "fn-sleeper", input: { url: effectUrl(id), ...(key ? { key } : {}) }, approvalMode: "ask", budget: {} });
  return settle(id);
}

describe("durable timers", () => {
  it("a sleeping run is `waiting` with what it waits for, holds one alarm at the wake-up, and wakes on the (fake) clock", async () => {
    const id = "wait-sleep";
    const view = await startSleeper(id);
    expect(view.status).toBe("waiting");
    expect(view.waits).toEqual([
      expect.objectContaining({
        kind: "sleep",
        reason: "let the deploy settle",
        until: expect.any(Number),
        expires_at: expect.any(Number),
        worker_chain: ["fn-sleeper"],
      }),
    ]);
    const until = view.waits[0]!.until!;
    expect(until - view.waits[0]!.created_at).toBe(10 * MIN);
    expect(await alarmOf(id)).toBe(until);
    expect(await posts(id)).toEqual([1, 0, 0]);

    // An alarm before the time (a retry, a spurious wake) changes nothing and re-arms the same one.
    expect(await runDurableObjectAlarm(object(id))).toBe(true);
    expect((await stub(id).status())!.status).toBe("waiting");
    expect(await alarmOf(id)).toBe(until);
    expect(await posts(id)).toEqual([1, 0, 0]);

    await stub(id).advanceClock(10 * MIN);
    const next = await settle(id);
    // Past the sleep: the second post ran once, and the run now waits for "go".
    expect(next).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go" }] });
    expect(await posts(id)).toEqual([1, 1, 0]);
    expect(await alarmOf(id)).toBe(next.waits[0]!.expires_at);
  });

  it("an event wait times out on the clock with a clear result; nothing before it runs again", async () => {
    const id = "wait-timeout";
    await startSleeper(id);
    await stub(id).advanceClock(10 * MIN);
    await settle(id);
    await stub(id).advanceClock(60 * MIN);
    const view = await settle(id);
    expect(view).toMatchObject({
      status: "succeeded",
      output: { got: { status: "timed_out", message: 'timed out after 1h: no event "go" arrived' } },
      waits: [],
    });
    expect(await posts(id)).toEqual([1, 1, 1]);
  });
});

/** `POST /runs/:id/events/:name` with the API token. */
const sendEvent = (id: string, name: string, body: unknown) =>
  exports.default.fetch(
    new Request(`https://edgework.test/runs/${id}/events/${name}`, {
      method: "POST",
      headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );

async function startWaiter(id: string, input: Record<string, string> = { event: "go" }): Promise<RunView> {
  await stub(id).start({ id, worker: "fn-waiter", input, approvalMode: "ask", budget: {} });
  return settle(id);
}

describe("waiting for events: POST /runs/:id/events/:name", () => {
  it("an event during the wait wakes the run with its payload; the same id again changes nothing", async () => {
    const id = "ev-during";
    expect((await startWaiter(id)).status).toBe("waiting");
    const res = await sendEvent(id, "go", { payload: { sha: "abc" }, id: "d-1" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ id: "d-1", applied: true, buffered: false, duplicate: false });
    const again = await sendEvent(id, "go", { payload: { sha: "other" }, id: "d-1" });
    expect(await again.json()).toMatchObject({ applied: false, duplicate: true });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { status: "received", id: "d-1", payload: { sha: "abc" } } });
  });

  it("a signal (a keyed delivery not buffered) wakes only a wait under its key, never a keyless wait for the same name", async () => {
    const id = "ev-signal-keyless";
    expect((await startWaiter(id)).status).toBe("waiting");
    const signal = { name: "go", id: "sig-1", key: "order-42", payload: { forged: true } };
    expect(await stub(id).deliverEvent(signal, false)).toEqual({ ok: true, applied: false, buffered: false, duplicate: false });
    expect(await settle(id)).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go" }] });
    // The same keyed event by API (buffered) is for this run: a keyless wait takes it.
    expect(await stub(id).deliverEvent({ ...signal, id: "api-1" }, true)).toMatchObject({ ok: true, applied: true });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { status: "received", id: "api-1" } });
  });

  it("an event before the wait is kept and taken by the next wait for its name; one for another name is not", async () => {
    const id = "ev-before";
    // The run exists and runs, but waits for nothing yet: fn-sleeper sleeps first.
    await startSleeper(id);
    expect(await (await sendEvent(id, "other", { payload: 1 })).json()).toMatchObject({ applied: false, buffered: true });
    expect(await (await sendEvent(id, "go", { payload: "early", id: "early-1" })).json()).toMatchObject({ applied: false, buffered: true });
    await stub(id).advanceClock(10 * MIN);
    const view = await settle(id);
    expect(view).toMatchObject({ status: "succeeded", output: { got: { status: "received", id: "early-1", payload: "early" } } });
    expect(await posts(id)).toEqual([1, 1, 1]);
  });

  it("an event after the timeout is recorded but not applied: the run moved on; an ended run refuses with 409", async () => {
    const id = "ev-late";
    await startWaiter(id, { event: "go", timeout: "5m" });
    await stub(id).advanceClock(5 * MIN);
    const running = await settle(id);
    expect(running).toMatchObject({ status: "succeeded", output: { status: "timed_out" } });
    const late = await sendEvent(id, "go", { payload: "late" });
    expect(late.status).toBe(409);
    expect(await late.json()).toEqual({ error: "the run already succeeded; it takes no events" });
  });

  it("hostile: a payload nested past what SQLite's JSON reads is refused (400), and one within it ends the run as its output", async () => {
    const id = "ev-deep";
    await startWaiter(id);
    // 1000 levels (SQLite's JSON depth limit) made the run's output unreadable: its outcome could not be recorded.
    for (const depth of [1000, 30_000]) {
      const res = await sendEvent(id, "go", `{"payload":${"[".repeat(depth)}${"]".repeat(depth)},"id":"deep-${depth}"}`);
      expect(res.status, `depth ${depth}`).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe(`payload: nested deeper than ${MAX_EVENT_DEPTH} levels`);
    }
    expect(await settle(id)).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go" }] });
    const deepest = JSON.parse(`${"[".repeat(MAX_EVENT_DEPTH)}${"]".repeat(MAX_EVENT_DEPTH)}`);
    expect((await sendEvent(id, "go", { payload: deepest, id: "deep-ok" })).status).toBe(202);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { status: "received", id: "deep-ok", payload: deepest } });
  });

  it("unknown run 404, payload over 64 KiB 413, hostile names, ids and keys 400; nothing is recorded", async () => {
    const id = "ev-bounds";
    await startWaiter(id);
    expect((await sendEvent("no-such-run", "go", { payload: 1 })).status).toBe(404);
    const big = await sendEvent(id, "go", { payload: "x".repeat(64 * 1024) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toMatch(/at most 65536 bytes/);
    expect((await sendEvent(id, "a".repeat(65), { payload: 1 })).status).toBe(400);
    expect((await sendEvent(id, "go%2F..%2Fx", { payload: 1 })).status).toBe(400);
    expect((await sendEvent(id, "go", { payload: 1, id: "x".repeat(201) })).status).toBe(400);
    expect((await sendEvent(id, "go", { payload: 1, id: "a/b" })).status).toBe(400);
    expect((await sendEvent(id, "go", { payload: 1, key: "k".repeat(257) })).status).toBe(400);
    expect((await sendEvent(id, "go", { payload: 1, extra: true })).status).toBe(400);
    expect((await stub(id).status())!.status).toBe("waiting");
  });

  it("buffered events are bounded: past 20 the oldest is dropped with a note", async () => {
    const id = "ev-buffer";
    await startSleeper(id);
    for (let i = 0; i < 25; i++) expect((await sendEvent(id, "noise", { payload: i, id: `n-${i}` })).status).toBe(202);
    const dropped = await runInDurableObject(object(id), (_o, state) =>
      state.storage.sql
        .exec("SELECT data FROM events WHERE type = 'event_dropped' ORDER BY seq")
        .toArray()
        .map((r) => JSON.parse(r.data as string).id),
    );
    expect(dropped).toEqual(["n-0", "n-1", "n-2", "n-3", "n-4"]);
    const buffered = await runInDurableObject(
      object(id),
      (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM inbox WHERE state = 'buffered'").one().n,
    );
    expect(buffered).toBe(20);
  });
});

describe("the `wait` kind: a model sleeps and waits for events", () => {
  const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: args });
  /** The tool results new in the model's `n`-th request (1-based): those of the turn before it. */
  const toolMessages = async (n: number) => {
    const requests = (await modelRequests("wait-agent")) as Array<{ messages: Array<{ role: string; content: string }> }>;
    const tools = (i: number) => (requests[i]?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content);
    if (!requests[n - 1]) throw new Error(`no request ${n}`);
    return tools(n - 1).slice(tools(n - 2).length);
  };

  it("one alarm at the earliest of an approval's expiry and a sleep; a timeout is the tool's result; a late event is kept, not applied; max bounds every wait", async () => {
    const id = "wait-agent";
    await script("wait-agent", [
      { tool_calls: [call("p", "fx_fetch", { url: effectUrl(`${id}-a`), method: "POST" }), call("s", "sleep", { duration: "20m", reason: "deploy" })] },
      { tool_calls: [call("w", "wait_for_event", { name: "ci_finished", timeout: "5m" })] },
      { tool_calls: [call("long", "sleep", { duration: "3h", reason: "too long" }), call("s2", "sleep", { duration: "1h", reason: "again" })] },
      { tool_calls: [call("w2", "wait_for_event", { name: "ci_finished", timeout: "10m" })] },
      { text: "done" },
    ]);
    await stub(id).start({ id, worker: "wait-agent", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const first = await settle(id);
    // A person must decide: awaiting_approval, and it lists the sleep too; the alarm is the sleep's (20 min, not the approval's 7 days).
    expect(first).toMatchObject({ status: "awaiting_approval", waits: [{ kind: "sleep", reason: "deploy" }] });
    expect(await alarmOf(id)).toBe(first.waits[0]!.until);

    await stub(id).advanceClock(20 * MIN);
    const slept = await settle(id);
    expect(slept).toMatchObject({ status: "awaiting_approval", waits: [] });
    expect(await alarmOf(id)).toBe(slept.approvals[0]!.expires_at);
    expect(await modelRequests("wait-agent")).toHaveLength(1);

    expect((await stub(id).decide(slept.approvals[0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
    const waiting = await settle(id);
    expect(waiting).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "ci_finished" }] });
    expect(await toolMessages(2)).toEqual([expect.stringContaining('"status":200'), "slept 20m"]);

    await stub(id).advanceClock(5 * MIN);
    const timedOut = await settle(id);
    expect(timedOut).toMatchObject({ status: "waiting", waits: [{ kind: "sleep", reason: "again" }] });
    expect(await toolMessages(3)).toEqual([
      JSON.stringify({ event: "ci_finished", timed_out: true, message: 'timed out after 5m: no event "ci_finished" arrived' }),
    ]);

    // The late event: the wait it was for timed out, so it is kept for the next wait, not applied.
    const late = await sendEvent(id, "ci_finished", { payload: { conclusion: "success" }, id: "late-1" });
    expect(await late.json()).toMatchObject({ applied: false, buffered: true });
    expect((await stub(id).status())!.status).toBe("waiting");

    await stub(id).advanceClock(60 * MIN);
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", output: "done" });
    // Over the instance's max (2h): the model reads why; no wait was made for it.
    expect(await toolMessages(4)).toEqual([expect.stringContaining("longer than the longest wait allowed here (2h)"), "slept 1h"]);
    expect(await toolMessages(5)).toEqual([JSON.stringify({ event: "ci_finished", id: "late-1", payload: { conclusion: "success" } })]);
    expect(await effectCount(`${id}-a`)).toBe(1);
    expect(await modelRequests("wait-agent")).toHaveLength(5);
  });

  it("a worker whose `wait` instance has a bad max is refused when the catalog loads", async () => {
    const { wait } = await import("../../src/engine");
    expect(wait.config.safeParse({ max: "3y" }).success).toBe(false);
    expect(wait.config.safeParse({ max: "400d" }).success).toBe(false);
    expect(wait.config.safeParse({}).success).toBe(true);
  });
});

describe("a paused run holds exactly one alarm, at the earliest deadline", () => {
  it("a sleep of an hour and an event wait of 30 minutes in parallel: one pause listing both, one alarm at 30 minutes", async () => {
    const id = "two-waits";
    await stub(id).start({ id, worker: "fn-two-waits", input: {}, approvalMode: "ask", budget: {} });
    const view = await settle(id);
    expect(view.status).toBe("waiting");
    expect(view.waits.map((w) => w.kind).sort()).toEqual(["event", "sleep"]);
    const event = view.waits.find((w) => w.kind === "event")!;
    expect(await alarmOf(id)).toBe(event.expires_at);
    expect(event.expires_at - event.created_at).toBe(30 * MIN);
    // The event comes: the sleep still holds the run, now with its own alarm.
    await sendEvent(id, "x", { payload: "now" });
    const still = await settle(id);
    expect(still.waits).toEqual([expect.objectContaining({ kind: "sleep" })]);
    expect(await alarmOf(id)).toBe(still.waits[0]!.until);
    await stub(id).advanceClock(60 * MIN);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { got: { status: "received", payload: "now" } } });
  });
});

describe("waits survive eviction at every step boundary", () => {
  for (const mode of ["throw", "abort"] as const) {
    it(`interrupted (${mode}) before each step in turn: the sleep and the event wait resume, every post exactly once`, async () => {
      // fn-sleeper's journal: post 1, the sleep's end, post 2, the event's end, post 3.
      for (let k = 0; k <= 5; k++) {
        const id = `wait-evict-${mode}-${k}`;
        await stub(id).start({ id, worker: "fn-sleeper", input: { url: effectUrl(id) }, approvalMode: "ask", budget: {} });
        await stub(id).setTestHooks({ fault: { atJournalSize: k, mode } });
        const count = { activations: 0, failed: 0 };
        expect((await settle(id, { count })).status, `paused at ${k}`).toBe("waiting");
        await stub(id).advanceClock(10 * MIN);
        expect(await settle(id, { count }), `waiting for go at ${k}`).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go" }] });
        expect((await sendEvent(id, "go", { payload: k, id: `go-${k}` })).status).toBe(202);
        const done = await settle(id, { count });
        expect(count.failed, `the fault fired once at ${k}`).toBe(1);
        expect(done, `interrupted at ${k}`).toMatchObject({ status: "succeeded", output: { got: { status: "received", payload: k } } });
        expect(await posts(id), `posts with interruption at ${k}`).toEqual([1, 1, 1]);
      }
    });
  }
});

describe("the model's waits survive eviction too", () => {
  it("a worker that sleeps, then waits for an event, interrupted before each step: every model request once", async () => {
    for (let k = 0; k <= 4; k++) {
      const id = `wait-agent-evict-${k}`;
      await script("wait-agent", [
        { tool_calls: [{ id: "s", name: "sleep", arguments: { duration: "20m", reason: "deploy" } }] },
        { tool_calls: [{ id: "w", name: "wait_for_event", arguments: { name: "go", timeout: "1h" } }] },
        { text: "done" },
      ]);
      await stub(id).start({ id, worker: "wait-agent", input: { input: "go" }, approvalMode: "ask", budget: {} });
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: "abort" } });
      const count = { activations: 0, failed: 0 };
      expect((await settle(id, { count })).status, `sleeping at ${k}`).toBe("waiting");
      await stub(id).advanceClock(20 * MIN);
      expect((await settle(id, { count })).waits, `waiting for go at ${k}`).toEqual([expect.objectContaining({ name: "go" })]);
      expect((await sendEvent(id, "go", { payload: k })).status).toBe(202);
      expect(await settle(id, { count }), `interrupted at ${k}`).toMatchObject({ status: "succeeded", output: "done" });
      expect(count.failed, `the fault fired once at ${k}`).toBe(1);
      expect(await modelRequests("wait-agent"), `model requests at ${k}`).toHaveLength(3);
    }
  });
});

describe("a waiting run's controls", () => {
  it("resume refuses while a wait's deadline is ahead (its alarm made sure of); cancel ends it and later events get 409", async () => {
    const id = "wait-controls";
    const view = await startSleeper(id);
    await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
    expect(await stub(id).resume()).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("waits for a timer or an event") });
    expect(await alarmOf(id)).toBe(view.waits[0]!.until);
    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelled" });
    expect((await sendEvent(id, "go", { payload: 1 })).status).toBe(409);
    expect((await stub(id).status())!).toMatchObject({ status: "cancelled", waits: [] });
  });

  it("a run takes at most 1,000 events in all (429), each id kept so a repeat stays a repeat", async () => {
    const id = "wait-flood";
    await startSleeper(id);
    for (let i = 0; i < 1000; i += 100) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, j) => stub(id).deliverEvent({ name: "noise", id: `f-${i + j}`, payload: i + j }, true)),
      );
      expect(answers.every((a) => a.ok)).toBe(true);
    }
    expect(await stub(id).deliverEvent({ name: "noise", id: "f-1000", payload: 0 }, true)).toMatchObject({ ok: false, status: 429 });
    expect(await stub(id).deliverEvent({ name: "noise", id: "f-3", payload: 0 }, true)).toMatchObject({ ok: true, duplicate: true });
  });
});
