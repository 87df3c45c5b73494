import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { effectUrl, script, settle, stub } from "../durable-objects/helpers";
import { MAX_SENDS_PER_ALARM } from "../../durable-objects/run/outbox";
import { hookUrl, plan, received, verifiedEvent } from "./receiver";

const SECRET = "test-notify-secret";
const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const post = (path: string, body: unknown) =>
  exports.default.fetch(new Request(`https://edgework.test${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) }));

async function startWith(notify: Record<string, unknown>, input: unknown = { title: "t" }, worker = "flow-echo"): Promise<string> {
  const res = await post("/runs", { worker, input, ...notify });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

/** The run's notify events, in order. */
const notifyEvents = async (id: string) =>
  (await stub(id).eventsSince("0-0", 500))!.events
    .filter((e) => e.type.startsWith("notify_"))
    .map((e) => ({ type: e.type, ...e.data }) as Record<string, unknown>);

/** Moves the run's clock past a retry's backoff and runs its alarm (the retry). */
async function retry(id: string, ms: number) {
  await stub(id).advanceClock(ms);
  await runDurableObjectAlarm(env.RUNS.getByName(id));
}

describe("completion webhooks", () => {
  it("a run's end is posted once, signed: the receiver of the docs verifies it, refuses it tampered or under another secret; the run records it", async () => {
    await plan("api-end", [200]);
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: hookUrl("api-end") });
    await settle(id);
    const [got, ...more] = await received("api-end");
    expect(more).toHaveLength(0);
    const event = (await verifiedEvent(got!.request(), SECRET))!;
    expect(event).toMatchObject({ type: "run.ended", created_at: expect.any(Number), run: { id, worker: "flow-echo", status: "succeeded", output: "done" } });
    expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(got!.headers["edgework-event-id"]).toBe(event.id);
    expect((event.run as { url?: string }).url).toBe(`https://edgework.test/runs/${id}`);
    // The same receiver refuses what edgework did not send as is.
    const tampered = new Request("https://receiver.test/", {
      method: "POST",
      headers: { "Edgework-Signature": got!.headers["edgework-signature"]! },
      body: got!.body.replace("done", "dune"),
    });
    expect(await verifiedEvent(tampered, SECRET)).toBeNull();
    expect(await verifiedEvent(got!.request(), "another secret")).toBeNull();
    const stale = `t=${Math.floor(Date.now() / 1000) - 600},v1=${got!.headers["edgework-signature"]!.split("v1=")[1]}`;
    expect(
      await verifiedEvent(new Request("https://receiver.test/", { method: "POST", headers: { "Edgework-Signature": stale }, body: got!.body }), SECRET),
    ).toBeNull();
    const origin = new URL(hookUrl("api-end")).origin;
    expect(await notifyEvents(id)).toEqual([{ type: "notify_sent", event_id: event.id, to: origin, status: 200, attempt: 1 }]);
  });

  it("an alarm sends at most MAX_SENDS_PER_ALARM notifications (each may wait for a slow receiver); the rest go in the next alarm", async () => {
    await plan(
      "many",
      Array.from({ length: 12 }, () => 200),
    );
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: hookUrl("many") });
    await settle(id);
    expect(await received("many")).toHaveLength(1);
    // Nine more due at once (as many pauses would leave while a receiver was down), of the run's own events.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
      const seq = [...state.storage.sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM events")][0]!.seq;
      for (let target = 1; target <= 9; target++)
        // Never tried (so due), planned an hour ahead: the alarm set for them does not fire by itself during the test.
        state.storage.sql.exec(
          "INSERT INTO outbox (event, target, kind, dest, due_at, first_at) VALUES (?, ?, 'url', ?, ?, ?)",
          seq,
          target,
          hookUrl("many"),
          Date.now() + 3_600_000,
          Date.now(),
        );
    });
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(await received("many")).toHaveLength(1 + MAX_SENDS_PER_ALARM);
    // An alarm is set for the rest (runDurableObjectAlarm runs one only if one is set).
    expect(await runDurableObjectAlarm(env.RUNS.getByName(id))).toBe(true);
    expect(await received("many")).toHaveLength(10);
  });

  it("a receiver's 500 and its timeout are retried with backoff; every attempt carries the one event id and verifies", async () => {
    await plan("flaky", [500, "hang", 204]);
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: hookUrl("flaky") });
    await settle(id);
    expect(await notifyEvents(id)).toMatchObject([{ type: "notify_failed", status: 500, attempt: 1, retry: true }]);
    await retry(id, 31_000);
    expect((await notifyEvents(id)).at(-1)).toMatchObject({ type: "notify_failed", error: "no answer within 2000 ms", attempt: 2, retry: true });
    // The second retry waits twice as long: not yet.
    await retry(id, 31_000);
    expect(await received("flaky")).toHaveLength(2);
    await retry(id, 31_000);
    expect((await notifyEvents(id)).at(-1)).toMatchObject({ type: "notify_sent", status: 204, attempt: 3 });
    const got = await received("flaky");
    expect(got).toHaveLength(3);
    const events = await Promise.all(got.map((g) => verifiedEvent(g.request(), SECRET)));
    expect(new Set(events.map((e) => e!.id)).size).toBe(1);
    expect(events.every((e) => e!.run.status === "succeeded")).toBe(true);
    // Delivered: nothing more to send, however many alarms come.
    await retry(id, 3_600_000);
    expect(await received("flaky")).toHaveLength(3);
  });

  it("a redirect is not followed, and gives up at once", async () => {
    await plan("moved", ["redirect"]);
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: hookUrl("moved") });
    await settle(id);
    expect(await notifyEvents(id)).toMatchObject([
      { type: "notify_failed", attempt: 1, retry: false, error: expect.stringContaining("redirects are not followed") },
    ]);
    expect(await received("moved-redirected")).toHaveLength(0);
    await retry(id, 3_600_000);
    expect(await received("moved")).toHaveLength(1);
  });

  it("a receiver that keeps failing is given up 24 hours after the first attempt", async () => {
    await plan("down", [503]);
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: hookUrl("down") });
    await settle(id);
    await retry(id, 25 * 3_600_000);
    expect((await notifyEvents(id)).map((e) => [e.attempt, e.retry])).toEqual([
      [1, true],
      [2, false],
    ]);
    await retry(id, 3_600_000);
    expect(await received("down")).toHaveLength(2);
  });

  it("a trigger's notify_url with notify_on [ended, paused]: the pause and the end are two events, each posted once; a cancel is an end too", async () => {
    await plan("trigger-notify", [200]);
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("notify-pause"), method: "POST" } }] }, { text: "done" }]);
    const res = await exports.default.fetch(
      new Request("https://edgework.test/hooks/notify-hook", {
        method: "POST",
        headers: { "X-Webhook-Token": "form-secret", "content-type": "application/json" },
        body: JSON.stringify({ text: "go" }),
      }),
    );
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { run_id: string }).run_id;
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    // The pause's notification is sent by the run's next alarm.
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
    await settle(id);
    const events = await Promise.all((await received("trigger-notify")).map((g) => verifiedEvent(g.request(), SECRET)));
    expect(events.map((e) => [e!.type, e!.run.status])).toEqual([
      ["run.paused", "awaiting_approval"],
      ["run.ended", "succeeded"],
    ]);
    expect(events[0]!.id).not.toBe(events[1]!.id);

    await plan("cancelled", [200]);
    const other = await startWith({ notify_url: hookUrl("cancelled") });
    expect((await post(`/runs/${other}/cancel`, {})).status).toBe(200);
    await runDurableObjectAlarm(env.RUNS.getByName(other));
    const [cancel] = await received("cancelled");
    expect(await verifiedEvent(cancel!.request(), SECRET)).toMatchObject({ type: "run.ended", run: { status: "cancelled" } });
  });
});

describe("a notify URL is hostile input", () => {
  it.each([
    ["a private address not listed in NOTIFY_ALLOW_HOSTS", "http://10.0.0.1/hook", /not in NOTIFY_ALLOW_HOSTS/],
    ["a listed host on another port", `http://127.0.0.1:1/hook`, /not in NOTIFY_ALLOW_HOSTS/],
    ["credentials in the URL", hookUrl("creds").replace("http://", "http://user:pw@"), /credentials/],
    ["a fragment", `${hookUrl("frag")}#x`, /fragment/],
    ["another scheme", "ftp://127.0.0.1/hook", /scheme is ftp:/],
    ["an oversized URL", `${hookUrl("long")}?${"a".repeat(2100)}`, /notify_url/],
    ["not a URL", "not a url", /not a URL/],
  ])("POST /runs refuses %s (400), and starts nothing", async (_what, url, error) => {
    const res = await post("/runs", { worker: "flow-echo", input: { title: "t" }, notify_url: url });
    expect(res.status).toBe(400);
    // The error, or (a bound of the body's schema) the issue naming the field.
    expect(JSON.stringify(await res.json())).toMatch(error);
  });

  it("notify_on takes only ended and paused", async () => {
    expect((await post("/runs", { worker: "flow-echo", input: { title: "t" }, notify_url: hookUrl("on"), notify_on: ["everything"] })).status).toBe(400);
  });

  it("a ${NAME} in a notify URL of POST /runs is not filled from the app's secrets", async () => {
    await plan("vars", [200]);
    await script("flow-echo", [{ text: "done" }]);
    const id = await startWith({ notify_url: `${hookUrl("vars")}?leak=\${API_TOKEN}` });
    await settle(id);
    const [got] = await received("vars");
    expect(got).toBeDefined();
    expect(JSON.stringify(got)).not.toContain("test-token");
  });
});
