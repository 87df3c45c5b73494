import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { modelRequests, script, stub } from "./helpers";
import { holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());

describe("a model's waits with its requests handed to the queue (MODEL_DISPATCH=queue)", () => {
  it("the sleep pauses the run with one alarm at its wake-up (no lease alarm), the event wakes it, each request is made once", async () => {
    const id = "waitq-agent";
    const held = holdDispatches();
    await script("wait-agent", [
      { tool_calls: [{ id: "s", name: "sleep", arguments: { duration: "20m", reason: "deploy" } }] },
      { tool_calls: [{ id: "w", name: "wait_for_event", arguments: { name: "go", timeout: "1h" } }] },
      { text: "done" },
    ]);
    await stub(id).start({ id, worker: "wait-agent", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const sleeping = await settleQueued(id, held);
    expect(sleeping).toMatchObject({ status: "waiting", waits: [{ kind: "sleep" }] });
    expect(await alarmOf(id)).toBe(sleeping.waits[0]!.until);
    await stub(id).advanceClock(20 * 60_000);
    expect(await settleQueued(id, held)).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go" }] });
    expect((await stub(id).deliverEvent({ name: "go", id: "q-1", payload: 1 }, true)).ok).toBe(true);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "done" });
    expect(await modelRequests("wait-agent")).toHaveLength(3);
  });
});
