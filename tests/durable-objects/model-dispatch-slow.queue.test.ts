import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CLAIM_TIMEOUT_MS, dispatchTiming, LEASE_MS } from "../../durable-objects/model-dispatch";
import { modelRequests, script, stub } from "./helpers";
import { consume, holdDispatches, settleQueued, timeOutHandOffs } from "./queue-dispatch";

/** Short leases and claim timeouts (the run and the consumer read the same object), restored after each test. */
const shorten = (timing: Partial<typeof dispatchTiming>) => Object.assign(dispatchTiming, timing);
afterEach(() => {
  shorten({ leaseMs: LEASE_MS, claimTimeoutMs: CLAIM_TIMEOUT_MS });
  vi.restoreAllMocks();
});

const start = (id: string, worker: string) => stub(id).start({ id, worker, input: { input: "go" }, approvalMode: "ask", budget: {} });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());
const claimer = (id: string) => env.RUNS.getByName(id) as unknown as { claimModelRequest(k: string, a: number): Promise<unknown> };

/** Alarms of the run until it ends, each after `pause` ms (the real queue delivers meanwhile). */
async function untilEnded(id: string, pause: number, limit = 200) {
  for (let i = 0; i < limit; i++) {
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const view = (await stub(id).status())!;
    if (view.status !== "running" && view.status !== "queued") return view;
    await sleep(pause);
  }
  throw new Error(`run ${id} did not end`);
}

describe("MODEL_DISPATCH=queue with slow models and dead consumers", () => {
  it("a quick request handed off while the consumer works a slow one waits at most the claim timeout: the run then asks the model itself, once", async () => {
    shorten({ claimTimeoutMs: 300 });
    await script("dispatch-helper", [{ text: "slow answer", delay_ms: 3_000 }]);
    await script("dispatch-lead", [{ text: "quick answer" }]);
    await start("dq-slow", "dispatch-helper");
    await runDurableObjectAlarm(env.RUNS.getByName("dq-slow"));
    // The app's real consumer is now inside its batch, waiting for the slow model (local queues deliver one batch at a time).
    for (let i = 0; i < 100 && (await modelRequests("dispatch-helper")).length === 0; i++) await sleep(20);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);

    const t0 = Date.now();
    await start("dq-quick", "dispatch-lead");
    const quick = await untilEnded("dq-quick", 100);
    const took = Date.now() - t0;
    expect(quick).toMatchObject({ status: "succeeded", output: "quick answer" });
    expect(took).toBeLessThan(2_000);
    expect(await modelRequests("dispatch-lead")).toHaveLength(1);
    // The slow run ends on its own answer; the quick run's late message asked nothing again.
    expect(await untilEnded("dq-slow", 200)).toMatchObject({ status: "succeeded", output: "slow answer" });
    expect(await modelRequests("dispatch-lead")).toHaveLength(1);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  }, 20_000);

  it("a model slower than several leases is asked once: the consumer renews at the lease its claim names, and the lapse alarm finds the claim alive", async () => {
    shorten({ leaseMs: 400 });
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "took a while", delay_ms: 2_000 }]);
    const id = "dq-slower-than-lease";
    await start(id, "dispatch-helper");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const consuming = consume(held.splice(0));
    // The run's lapse alarm, over and over while the model thinks five leases long.
    for (let t = 0; t < 2_000; t += 150) {
      await sleep(150);
      await runDurableObjectAlarm(env.RUNS.getByName(id));
    }
    expect((await consuming).explicitAcks).toHaveLength(1);
    expect(held).toHaveLength(0);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "took a while" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  }, 20_000);

  it("an object restarted without its alarm while a dead consumer holds the claim re-arms the lapse on first access; the request is then sent again", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "after the restart" }]);
    const id = "dq-restarted";
    await start(id, "dispatch-helper");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const [message] = held.splice(0);
    // A consumer claims it, then the runtime dies with it; the restart comes back without the run's alarm.
    expect(await claimer(id).claimModelRequest(message!.key, 1)).toMatchObject({ model: "openai:dispatch-helper" });
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.deleteAlarm());
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("restarted")).catch(() => {});
    // Any access (here, someone polling the run) starts the object: the lapse is armed again, a lease after the claim.
    expect((await stub(id).status())!.status).toBe("running");
    const alarm = await alarmOf(id);
    expect(alarm).not.toBeNull();
    expect(alarm! - Date.now()).toBeLessThanOrEqual(LEASE_MS);
    expect(alarm! - Date.now()).toBeGreaterThan(LEASE_MS - 10_000);
    // When it fires after the lease lapsed, the request goes out again.
    await timeOutHandOffs(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toEqual([expect.objectContaining({ key: message!.key, attempt: 2 })]);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "after the restart" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  });
});
