import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { landAt } from "../durable-objects/interleave";
import { deliver, issueBody, keyOf, runOf } from "./support";

/** Ends a run the key started: its model answers, and its end's outbox tells the key (settle.outbox). */
async function finish(id: string) {
  await script("flow-echo", [{ text: `done ${id}` }]);
  return settle(id);
}

describe("concurrency per key", () => {
  it("on_busy: queue — the runs of one issue follow one another, in delivery order; another issue's run is not held up", async () => {
    const bodies = [1, 2, 3].map((seq) => issueBody(201, seq));
    const runs = await Promise.all(bodies.map((b) => runOf("flow-queue", b)));
    expect((await deliver("flow-queue", bodies[0]!)).body).toMatchObject({ run_id: runs[0], started: true });
    expect((await deliver("flow-queue", bodies[1]!)).body).toEqual({ queued: true, position: 1 });
    expect((await deliver("flow-queue", bodies[2]!)).body).toEqual({ queued: true, position: 2 });
    // Another issue: its own key, its own run at once.
    const other = issueBody(202, 1);
    expect((await deliver("flow-queue", other)).body).toMatchObject({ run_id: await runOf("flow-queue", other), started: true });
    expect(await stub(runs[1]!).status()).toBeNull();
    await finish(runs[0]!);
    // The first ended: its outbox told the key, which started the next.
    expect((await stub(runs[1]!).status())?.status).toBe("queued");
    expect(await stub(runs[2]!).status()).toBeNull();
    // A redelivery of the second says which run it became.
    expect((await deliver("flow-queue", bodies[1]!)).body).toMatchObject({ run_id: runs[1], started: true, duplicate: true });
    await finish(runs[1]!);
    expect((await stub(runs[2]!).status())?.status).toBe("queued");
    await finish(runs[2]!);
    const views = await Promise.all(runs.map(async (r) => (await stub(r).status())!));
    for (let i = 1; i < 3; i++) expect(views[i]!.created_at).toBeGreaterThanOrEqual(views[i - 1]!.updated_at);
    expect(views.map((v) => (v.input as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect((await (await keyOf("flow-queue", 201)).tables()).slots).toEqual([]);
  });

  it("on_busy: skip — a delivery for a busy issue starts nothing and names the run that has it (202 {skipped, run_id})", async () => {
    const [a, b] = [issueBody(211, 1), issueBody(211, 2)];
    const first = await runOf("flow-skip", a);
    expect((await deliver("flow-skip", a)).body).toMatchObject({ run_id: first, started: true });
    const skipped = await deliver("flow-skip", b);
    expect(skipped.status).toBe(202);
    expect(skipped.body).toMatchObject({ skipped: true, run_id: first });
    expect(await stub(await runOf("flow-skip", b)).status()).toBeNull();
    // Skipped stays skipped for that delivery, even once the key is free.
    await finish(first);
    expect((await deliver("flow-skip", b)).body).toMatchObject({ skipped: true, run_id: first, duplicate: true });
    const c = issueBody(211, 3);
    expect((await deliver("flow-skip", c)).body).toMatchObject({ run_id: await runOf("flow-skip", c), started: true });
  });

  it("on_busy: replace — one run left running, each one before it cancelled with the reason on its event", async () => {
    const bodies = [1, 2, 3].map((seq) => issueBody(221, seq));
    const runs = await Promise.all(bodies.map((b) => runOf("flow-replace", b)));
    expect((await deliver("flow-replace", bodies[0]!)).body).toMatchObject({ run_id: runs[0], started: true });
    expect((await deliver("flow-replace", bodies[1]!)).body).toMatchObject({ run_id: runs[1], started: true, replaced: [runs[0]] });
    expect((await deliver("flow-replace", bodies[2]!)).body).toMatchObject({ run_id: runs[2], started: true, replaced: [runs[1]] });
    for (const i of [0, 1]) {
      expect((await stub(runs[i]!).status())!.status).toBe("cancelled");
      const events = (await stub(runs[i]!).eventsSince("0-0", 100))!.events;
      expect(events.find((e) => e.type === "run_cancelled")?.data.reason).toBe(
        `replaced by run ${runs[i + 1]}: a newer delivery for its key (trigger flow-replace, on_busy: replace)`,
      );
    }
    expect((await stub(runs[2]!).status())!.status).toBe("queued");
    expect((await (await keyOf("flow-replace", 221)).tables()).slots).toEqual([runs[2]]);
    await finish(runs[2]!);
    expect(await modelRequests("flow-echo")).toHaveLength(1);
  });

  it("on_busy: {event} — the first delivery starts the run, the next are events it may wait for (buffered until it does)", async () => {
    const bodies = [1, 2].map((seq) => issueBody(231, seq, `T${seq}`));
    const run = await runOf("flow-event", bodies[0]!);
    expect((await deliver("flow-event", bodies[0]!)).body).toMatchObject({ run_id: run, started: true });
    expect((await deliver("flow-event", bodies[1]!)).body).toMatchObject({ run_id: run, event: "issue_updated" });
    expect((await deliver("flow-event", bodies[1]!)).body).toMatchObject({ run_id: run, event: "issue_updated", duplicate: true });
    await script("flow-chat", [{ text: "done" }]);
    await settle(run);
    // An ended run takes no event: the next delivery starts a new run for the issue.
    const third = issueBody(231, 3, "T3");
    expect((await deliver("flow-event", third)).body).toMatchObject({ run_id: await runOf("flow-event", third), started: true });
  });

  it("a key's run that ended before its end reached the key refuses the next message (410): that delivery starts a new run", async () => {
    const [a, b] = [issueBody(241, 1), issueBody(241, 2)];
    const [first, second] = [await runOf("flow-message", a), await runOf("flow-message", b)];
    expect((await deliver("flow-message", a)).body).toMatchObject({ run_id: first, started: true });
    await script("flow-chat", [{ text: "a1" }, { text: "b1" }]);
    // The run has answered; held before its outbox tells the key, the next delivery comes.
    const held = await landAt(
      first,
      { point: "settle.outbox" },
      () => deliver("flow-message", b),
      () => runDurableObjectAlarm(env.RUNS.getByName(first)),
    );
    expect(held).toMatchObject({ reached: true, landed: { status: 202, body: { run_id: second, started: true } } });
    expect((await stub(first).status())!.messages.filter((m) => m.role === "user")).toHaveLength(1);
    // The first's end reached the key after all: the second holds the slot.
    expect((await (await keyOf("flow-message", 241)).tables()).slots).toEqual([second]);
    expect(await settle(second)).toMatchObject({ status: "succeeded", output: "b1" });
  });
});
