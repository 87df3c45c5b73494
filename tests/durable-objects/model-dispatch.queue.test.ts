import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { dispatchMode } from "../../durable-objects/engine-config";
import { CLAIM_TIMEOUT_MS, MAX_ATTEMPTS, ModelDispatch, modelQueue } from "../../durable-objects/model-dispatch";
import { Sql } from "../../durable-objects/sql";
import { RunError } from "../../src/engine";
import { effectCount, effectUrl, modelHeaderNames, modelRequests, script, stub } from "./helpers";
import { consume, handOffs, holdDispatches, settleQueued, timeOutHandOffs } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

const start = (id: string, worker = "dispatch-helper", input: unknown = { input: "go" }) =>
  stub(id).start({ id, worker, input, approvalMode: "ask", budget: {} });
/** The helper posts one effect (`dq-<tag>`, counted outside the run), then answers. */
const twoTurns = (tag = "any") =>
  script("dispatch-helper", [
    { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(`dq-${tag}`), method: "POST", body: "x" } }] },
    { text: "helped" },
  ]);
type ClaimRpc = { claimModelRequest(k: string, a: number): Promise<unknown>; renewModelClaim(k: string, a: number): Promise<boolean> };
const claimer = (id: string) => env.RUNS.getByName(id) as unknown as ClaimRpc;
const deliver = (id: string, key: string, attempt: number, answer: unknown) =>
  (env.RUNS.getByName(id) as unknown as { deliverModelAnswer(k: string, a: number, x: unknown): Promise<{ recorded: boolean }> }).deliverModelAnswer(
    key,
    attempt,
    answer,
  );

describe("MODEL_DISPATCH=queue", () => {
  it("is this project's setting and the default when the var is unset; any other value than direct or queue is a config error naming the var", () => {
    expect(dispatchMode(env)).toBe("queue");
    expect(dispatchMode({ ...env, MODEL_DISPATCH: undefined } as unknown as Env)).toBe("queue");
    expect(dispatchMode({ ...env, MODEL_DISPATCH: "" } as unknown as Env)).toBe("queue");
    expect(() => dispatchMode({ ...env, MODEL_DISPATCH: "later" } as unknown as Env)).toThrow(/MODEL_DISPATCH must be "direct" or "queue", got "later"/);
  });

  it("queue mode without the MODEL_QUEUE binding fails naming it (instead of sending again forever)", async () => {
    await runInDurableObject(env.RUNS.getByName("dq-no-binding"), async (_o, state) => {
      const dispatch = new ModelDispatch({
        ctx: state,
        env: { ...env, MODEL_QUEUE: undefined } as unknown as Env,
        sql: new Sql(state.storage.sql),
        wakeSoon: async () => {},
        io: (_point, fn) => fn(),
      });
      const models = dispatch.models(() => ({ request: async () => ({ text: "", toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } }) }), {
        providers: {},
        prices: {},
      } as never);
      expect(() => models("openai:dispatch-helper")).toThrow(/MODEL_DISPATCH=queue needs the MODEL_QUEUE queue binding/);
    });
  });

  it("a code function that catches every error around ctx.llmAsk gets the model's answer, not its fallback for the hand-off", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "the real summary" }]);
    await start("dq-asker", "fn-asker", { input: "x" });
    expect(await settleQueued("dq-asker", held)).toMatchObject({ status: "succeeded", output: { summary: "the real summary" } });
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  });

  it("an answer with usage the provider reported as fractions is recorded, as in direct mode (not acked and asked again)", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "fractional", usage: { prompt_tokens: 1.5, completion_tokens: 5 } }]);
    await start("dq-usage");
    expect(await settleQueued("dq-usage", held)).toMatchObject({ status: "succeeded", output: "fractional" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  });

  it(`a request whose consumers all die fails the run with model_error after ${MAX_ATTEMPTS} attempts, naming the queue`, async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-never";
    await start(id);
    for (let i = 0; i <= MAX_ATTEMPTS; i++) {
      await runDurableObjectAlarm(env.RUNS.getByName(id));
      // Every consumer claims its message, then dies.
      for (const m of held.splice(0)) await claimer(id).claimModelRequest(m.key, m.attempt);
      await timeOutHandOffs(id);
    }
    const view = (await stub(id).status())!;
    expect(view).toMatchObject({ status: "failed", error: { code: "model_error" } });
    expect(view.error!.message).toMatch(new RegExp(`no answer came back for ${MAX_ATTEMPTS} hand-offs`));
    expect(await modelRequests("dispatch-helper")).toHaveLength(0);
  });

  it("a message naming an object of another namespace is acked, and the batch's other messages are still served", async () => {
    const held = holdDispatches();
    await twoTurns();
    await start("dq-batch");
    await runDurableObjectAlarm(env.RUNS.getByName("dq-batch"));
    const result = await consume([{ run: "ab".repeat(32), key: "k", attempt: 1 }, ...held.splice(0)]);
    expect(result.explicitAcks).toHaveLength(2);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  });

  it("a hand-off row whose key is already journaled (left by a mode switch) does not arm an alarm in the past", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "x" }]);
    const id = "dq-stale-row";
    await start(id);
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
      state.storage.sql.exec(
        "CREATE TABLE IF NOT EXISTS model_dispatch (key TEXT PRIMARY KEY, model TEXT NOT NULL, attempt INTEGER NOT NULL, sent_at INTEGER NOT NULL, claimed INTEGER, lease_until INTEGER, answer TEXT) WITHOUT ROWID",
      );
      state.storage.sql.exec("INSERT INTO journal (key, value, at) VALUES ('old/turn:1/model', 'null', 0)");
      state.storage.sql.exec("INSERT INTO model_dispatch (key, model, attempt, sent_at) VALUES ('old/turn:1/model', 'm', 1, 0)");
    });
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toHaveLength(1);
    const alarm = await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());
    expect(alarm! - Date.now()).toBeGreaterThan(CLAIM_TIMEOUT_MS - 5_000);
  });

  it("a two-turn run completes through the app's queue; each model request is made by the consumer, none inside the object", async () => {
    await twoTurns();
    const id = "dq-real";
    await start(id);
    for (let i = 0; i < 200; i++) {
      await runDurableObjectAlarm(env.RUNS.getByName(id));
      const view = (await stub(id).status())!;
      if (view.status === "succeeded") break;
      // The queue delivers on its own: wait for the hand-off to be answered.
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await stub(id).status()).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
    // OPENAI_CUSTOM_HEADERS is set in this pool's env (vitest.config.ts): the consumer's client sends none of it.
    expect((await modelHeaderNames("dispatch-helper")).flat()).not.toContain("x-from-env");
    expect((await handOffs(id)).map((h) => ({ attempt: h.attempt, claimed: h.claimed, answered: h.answer !== null }))).toEqual([
      { attempt: 1, claimed: 1, answered: true },
      { attempt: 1, claimed: 1, answered: true },
    ]);
  });

  it("an activation hands the request off and ends before the model is asked; the delivered answer becomes the journal step", async () => {
    const held = holdDispatches();
    await twoTurns("idle");
    const id = "dq-idle";
    await start(id);
    expect(await runDurableObjectAlarm(env.RUNS.getByName(id))).toBe(true);
    // The activation is over, the run waits: one message, no model request made.
    expect(held).toEqual([{ run: env.RUNS.idFromName(id).toString(), key: "dispatch-helper/turn:1/model", attempt: 1 }]);
    expect(await modelRequests("dispatch-helper")).toHaveLength(0);
    expect((await stub(id).status())!.status).toBe("running");
    // Its alarm is the claim timeout's: when the run asks the model itself if nobody claimed the hand-off.
    const alarm = await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());
    expect(alarm! - Date.now()).toBeGreaterThan(CLAIM_TIMEOUT_MS - 5_000);
    expect(alarm! - Date.now()).toBeLessThanOrEqual(CLAIM_TIMEOUT_MS);
    const result = await consume(held.splice(0));
    expect(result.explicitAcks).toHaveLength(1);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    const view = await settleQueued(id, held);
    expect(view).toMatchObject({ status: "succeeded", output: "helped" });
    expect(view.call_tree!.tools.map((t) => t.name)).toEqual(["fx_fetch"]);
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
    expect(await effectCount("dq-idle")).toBe(1);
  });

  it("a duplicate delivery, a stale one and one for an unknown key change nothing", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "first" }]);
    const id = "dq-dup-delivery";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const key = held[0]!.key;
    // Nobody claimed it yet: a delivery is refused (only a claimed attempt may answer).
    const forged = { ok: true, response: { text: "forged", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } } };
    expect(await deliver(id, key, 1, forged)).toEqual({ recorded: false });
    await consume(held.splice(0));
    expect(await deliver(id, key, 1, forged)).toEqual({ recorded: false });
    expect(await deliver(id, "dispatch-helper/turn:9/model", 1, forged)).toEqual({ recorded: false });
    expect(await deliver(id, key, 1, { ok: "yes" })).toEqual({ recorded: false });
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "first" });
    expect(await deliver(id, key, 1, forged)).toEqual({ recorded: false });
    expect((await stub(id).status())!.output).toBe("first");
  });

  it("a duplicated queue message makes one model request", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-dup-message";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const [message] = held.splice(0);
    const result = await consume([message, message]);
    expect(result.explicitAcks).toHaveLength(2);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    // Again after the object was evicted (its memory gone): the durable claim still refuses it.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("evicted")).catch(() => {});
    await consume([message]);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
  });

  it("a duplicate message while the first consumer still waits for the model (the object evicted meanwhile) sends nothing again", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-dup-in-flight";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const [message] = held.splice(0);
    // The first consumer claimed it and is waiting for the model; the idle object is evicted.
    const rpc = env.RUNS.getByName(id) as unknown as { claimModelRequest(k: string, a: number): Promise<unknown> };
    expect(await rpc.claimModelRequest(message!.key, 1)).toMatchObject({ model: "openai:dispatch-helper" });
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("evicted")).catch(() => {});
    expect((await consume([message])).explicitAcks).toHaveLength(1);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toHaveLength(0);
    expect(await modelRequests("dispatch-helper")).toHaveLength(0);
  });

  it("a consumer that dies after claiming is replaced once its lease lapses; one that renews is not", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-dead-consumer";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    const [message] = held.splice(0);
    const rpc = env.RUNS.getByName(id) as unknown as {
      claimModelRequest(k: string, a: number): Promise<unknown>;
      renewModelClaim(k: string, a: number): Promise<boolean>;
    };
    // A consumer claims it and renews while the model thinks: the alarm's replay leaves it be.
    expect(await rpc.claimModelRequest(message!.key, 1)).toMatchObject({ model: "openai:dispatch-helper" });
    expect(await rpc.renewModelClaim(message!.key, 1)).toBe(true);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toHaveLength(0);
    // Then it dies: no renewal, no answer. The queue delivers its message again: the lapsed claim is sent again at once.
    await timeOutHandOffs(id);
    expect((await consume([message])).explicitAcks).toHaveLength(1);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toEqual([expect.objectContaining({ key: message!.key, attempt: 2 })]);
    // The dead consumer's attempt can neither renew nor answer any more.
    expect(await rpc.renewModelClaim(message!.key, 1)).toBe(false);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
    expect(await rpc.renewModelClaim(message!.key, 2)).toBe(false);
  });

  it("a lost message: once the claim timeout passed, the run's alarm asks the model itself; each model request is made once", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-lost";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    held.splice(0); // dropped by the queue
    // Before the timeout the alarm's replay sends nothing again.
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toHaveLength(0);
    await timeOutHandOffs(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    // Turn 1 asked in the object (attempt 2, held by the run), turn 2 handed off.
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    expect(held).toEqual([expect.objectContaining({ key: "dispatch-helper/turn:2/model", attempt: 1 })]);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
    // OPENAI_CUSTOM_HEADERS is set in this pool's env (vitest.config.ts): the consumer's client sends none of it.
    expect((await modelHeaderNames("dispatch-helper")).flat()).not.toContain("x-from-env");
    expect((await handOffs(id)).map((h) => h.attempt)).toEqual([2, 1]);
  });

  it("a queue send that throws leaves the hand-off: the claim timeout's alarm asks the model in the object", async () => {
    const held = holdDispatches();
    vi.spyOn(modelQueue, "send").mockRejectedValueOnce(new Error("queue unavailable"));
    await twoTurns();
    const id = "dq-send-fails";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held).toHaveLength(0);
    expect((await stub(id).status())!.status).toBe("running");
    await timeOutHandOffs(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    expect(held).toEqual([expect.objectContaining({ key: "dispatch-helper/turn:2/model", attempt: 1 })]);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
  });

  it("a request handed off just before the object was reset is asked by the run when its message arrives, not after the timeout", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-evicted";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("deployed")).catch(() => {});
    const lost = held.splice(0);
    expect((await consume(lost)).explicitAcks).toHaveLength(1);
    expect(await modelRequests("dispatch-helper")).toHaveLength(0);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
    expect(held).toEqual([expect.objectContaining({ key: "dispatch-helper/turn:2/model", attempt: 1 })]);
    // The first message, delivered late, is stale: no second request.
    await consume(lost);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "helped" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
  });

  it("a model failure is delivered and fails the run with model_error, as in direct mode", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ status: 400, body: { error: { message: "model says no" } } }]);
    const id = "dq-failure";
    await start(id);
    const view = await settleQueued(id, held);
    expect(view.status).toBe("failed");
    expect(view.error).toMatchObject({ code: "model_error" });
    expect(view.error!.message).toMatch(/dispatch-helper\.worker: model openai:dispatch-helper failed: 400 model says no/);
    expect(await modelRequests("dispatch-helper")).toHaveLength(1);
  });

  it("parallel tool calls that each call a nested worker hand off both requests in one activation", async () => {
    const held = holdDispatches();
    await script("dispatch-lead", [
      {
        tool_calls: [
          { name: "dispatch-helper", arguments: { input: "a" } },
          { name: "dispatch-helper", arguments: { input: "b" } },
        ],
      },
      { text: "led" },
    ]);
    await script("dispatch-helper", [{ text: "one" }, { text: "two" }]);
    const id = "dq-parallel";
    await start(id, "dispatch-lead");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await consume(held.splice(0));
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(held.map((m) => m.key).sort()).toEqual([
      "dispatch-lead/turn:1/tool:1/dispatch-helper/turn:1/model",
      "dispatch-lead/turn:1/tool:2/dispatch-helper/turn:1/model",
    ]);
    expect(new Set(held.map((m) => m.key)).size).toBe(2);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "led" });
    expect(await modelRequests("dispatch-helper")).toHaveLength(2);
    expect(await modelRequests("dispatch-lead")).toHaveLength(2);
  });

  it("a run cancelled while its request is handed off makes no model request, and deliveries change nothing", async () => {
    const held = holdDispatches();
    await twoTurns();
    const id = "dq-cancel";
    await start(id);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect((await stub(id).cancel()).ok).toBe(true);
    expect((await consume(held.splice(0))).explicitAcks).toHaveLength(1);
    expect(await modelRequests("dispatch-helper")).toHaveLength(0);
    const answer = { ok: true, response: { text: "late", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } } };
    expect(await deliver(id, "dispatch-helper/turn:1/model", 1, answer)).toEqual({ recorded: false });
    expect((await stub(id).status())!.status).toBe("cancelled");
  });

  it("an answer over the journal's step bound fails the run with too_large, naming its size; nothing that big is stored", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [{ text: "x".repeat(1_600_000) }]);
    const id = "dq-oversize";
    await start(id);
    const view = await settleQueued(id, held);
    expect(view.status).toBe("failed");
    expect(view.error).toMatchObject({ code: "too_large" });
    expect(view.error!.message).toMatch(/model openai:dispatch-helper answered with \d+ bytes .*over the journal's bound of 1500000 bytes per step/);
    expect((await handOffs(id))[0]!.answer!.length).toBeLessThan(1000);
  });

  it("an attached file that changed since it was attached fails the request in the run's activation, naming the file; nothing is handed off", async () => {
    const send = vi.spyOn(modelQueue, "send");
    await runInDurableObject(env.RUNS.getByName("dq-att-changed"), async (_o, state) => {
      const dispatch = new ModelDispatch({ ctx: state, env, sql: new Sql(state.storage.sql), wakeSoon: async () => {}, io: (_point, fn) => fn() });
      const model = dispatch.models(() => ({ request: async () => ({ text: "", toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } }) }), {
        providers: {},
        prices: {},
      } as never)("openai:dispatch-helper");
      const changed = new RunError("attachment_changed", 'attachment "docs:/a.png" changed since it was given to reader', true);
      const request = model.request({
        key: "r/turn:1/model",
        tools: [],
        messages: [{ role: "user", content: [{ type: "attachment", name: "a.png", mime: "image/png", size: 3, bytes: () => Promise.reject(changed) }] }],
      });
      await expect(request).rejects.toBe(changed);
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM model_dispatch").one().n).toBe(0);
    });
    expect(send).not.toHaveBeenCalled();
  });

  it("a message that is not a hand-off is acknowledged and changes nothing", async () => {
    const result = await consume([{ run: "not-an-id", key: "x", attempt: 1 }, "hello", { run: "a".repeat(64), key: "k", attempt: 1, extra: true }]);
    expect(result.explicitAcks).toHaveLength(3);
    expect(result.retryMessages).toHaveLength(0);
  });
});
