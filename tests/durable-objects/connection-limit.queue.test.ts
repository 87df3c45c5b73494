import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MODEL_CONNECTIONS } from "../../durable-objects/model-consumer";
import { CLAIM_TIMEOUT_MS, dispatchTiming, ModelDispatch, modelQueue } from "../../durable-objects/model-dispatch";
import { Sql } from "../../durable-objects/sql";
import { RunInterrupted } from "../../src/engine";
import { ConnectionSlots } from "../../src/engine/net/connection-slots";
import { modelRequests, script, stub } from "./helpers";
import { consume, holdDispatches, settleQueued } from "./queue-dispatch";

afterEach(() => {
  dispatchTiming.claimTimeoutMs = CLAIM_TIMEOUT_MS;
  vi.restoreAllMocks();
});

const MODEL = "connection-limit";

/** Runs of the fixture, each activated once: its model request handed off (held, not sent). */
async function handedOff(prefix: string, n: number) {
  const held = holdDispatches();
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) {
    await stub(id).start({ id, worker: MODEL, input: { input: "go" }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(env.RUNS.getByName(id));
  }
  expect(held).toHaveLength(n);
  return { held, ids };
}

describe("the queue consumer and the six connections of its batch", () => {
  it("ten slow model requests in one batch: at most five claimed and waiting for headers at once, the rest claimed as a connection frees; each asked once, by the consumer, none left to the run", async () => {
    await script(
      MODEL,
      Array.from({ length: 10 }, (_, i) => ({ text: `slow answer ${i}`, delay_ms: 400 })),
    );
    const { held, ids } = await handedOff("cl-ten", 10);

    // One timeline of this isolate (the runs' objects and the consumer share it): each claim granted, each model's response headers.
    const events: Array<"claimed" | "headers"> = [];
    const claim = ModelDispatch.prototype.claim;
    vi.spyOn(ModelDispatch.prototype, "claim").mockImplementation(async function (this: ModelDispatch, key, attempt) {
      const claimed = await claim.call(this, key, attempt);
      if (claimed) events.push("claimed");
      return claimed;
    });
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const res = await realFetch(input, init);
      if (String(input instanceof Request ? input.url : input).endsWith("/chat/completions")) events.push("headers");
      return res;
    });
    const askedByRun = vi.spyOn(ModelDispatch.prototype as unknown as { askDirectly(): unknown }, "askDirectly");

    const result = await consume(held.splice(0));
    expect(result.explicitAcks).toHaveLength(10);
    expect(result.retryMessages).toHaveLength(0);
    // Never more claimed than can be in flight: a claim waited for a connection, not the claimed request.
    let waitingForHeaders = 0;
    let most = 0;
    for (const e of events) {
      waitingForHeaders += e === "claimed" ? 1 : -1;
      most = Math.max(most, waitingForHeaders);
    }
    expect(events.filter((e) => e === "claimed")).toHaveLength(10);
    expect(most).toBe(MODEL_CONNECTIONS);
    expect(await modelRequests(MODEL)).toHaveLength(10);

    for (const id of ids) expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: expect.stringMatching(/^slow answer \d$/) });
    expect(askedByRun).not.toHaveBeenCalled();
    expect(await modelRequests(MODEL)).toHaveLength(10);
  }, 30_000);

  it("a request that finds no connection free within the claim timeout is left unclaimed (acked): its run asks the model itself, once", async () => {
    await script(MODEL, [
      ...Array.from({ length: MODEL_CONNECTIONS }, () => ({ text: "from the consumer", delay_ms: 1_500 })),
      ...Array.from({ length: 10 - MODEL_CONNECTIONS }, () => ({ text: "from the run" })),
    ]);
    const { held, ids } = await handedOff("cl-busy", 10);
    // Shortened once handed off (their runs' own alarms stay 10 s away): the test drives the runs.
    dispatchTiming.claimTimeoutMs = 300;
    const busy = vi.spyOn(console, "warn");
    const askedByRun = vi.spyOn(ModelDispatch.prototype as unknown as { askDirectly(): unknown }, "askDirectly");
    const result = await consume(held.splice(0));
    expect(result.explicitAcks).toHaveLength(10);
    expect(busy.mock.calls.filter(([line]) => String(line).includes('"model_dispatch_busy"'))).toHaveLength(10 - MODEL_CONNECTIONS);
    const outputs: unknown[] = [];
    for (const id of ids) outputs.push((await settleQueued(id, held)).output);
    expect(outputs.filter((o) => o === "from the consumer")).toHaveLength(MODEL_CONNECTIONS);
    expect(outputs.filter((o) => o === "from the run")).toHaveLength(10 - MODEL_CONNECTIONS);
    expect(askedByRun).toHaveBeenCalledTimes(10 - MODEL_CONNECTIONS);
    expect(await modelRequests(MODEL)).toHaveLength(10);
  }, 30_000);

  it("a run's hand-off to the queue (a send the platform counts) takes its turn in the activation's line", async () => {
    const sent = vi.spyOn(modelQueue, "send").mockResolvedValue();
    await runInDurableObject(env.RUNS.getByName("cl-send"), async (_o, state) => {
      const dispatch = new ModelDispatch({ ctx: state, env, sql: new Sql(state.storage.sql), wakeSoon: async () => {}, io: (_point, fn) => fn() });
      const line = new ConnectionSlots(1);
      const busy = await line.acquire();
      const never = async () => Promise.reject(new Error("not asked directly"));
      const model = dispatch.models(() => ({ request: never }), { providers: {}, prices: {} } as never, line)(`openai:${MODEL}`);
      const handOff = model.request({ key: `${MODEL}/turn:1/model`, messages: [{ role: "user", content: "go" }], tools: [] }).catch((e) => e);
      await new Promise((r) => setTimeout(r, 50));
      expect(sent).not.toHaveBeenCalled();
      busy.release();
      expect(await handOff).toBeInstanceOf(RunInterrupted);
      expect(sent).toHaveBeenCalledTimes(1);
    });
  });
});
