import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_DELTA_INTERVAL_MS, deltaIntervalMs, type ForwardStats } from "../../durable-objects/delta-forwarder";
import { liveText } from "../../durable-objects/model-consumer";
import { script, stub } from "./helpers";
import { consume, holdDispatches, settleQueued, timeOutHandOffs } from "./queue-dispatch";

afterEach(() => vi.restoreAllMocks());

const WORKER = "live-queue-writer";
const KEY = `${WORKER}/turn:1/model`;
/** 24 pieces a model writes 40 ms apart: about a second of text. */
const PIECES = Array.from({ length: 24 }, (_, i) => `piece ${i + 1}. `);
const TEXT = PIECES.join("");
const writing = () => script(WORKER, [{ text: TEXT, chunks: PIECES, chunk_delay_ms: 40 }]);

type ForwardRpc = {
  forwardModelText(k: string, a: number, n: number, t: string): Promise<{ watched: boolean }>;
  claimModelRequest(k: string, a: number): Promise<unknown>;
  deliverModelAnswer(k: string, a: number, x: unknown): Promise<{ recorded: boolean }>;
};
const rpc = (id: string) => env.RUNS.getByName(id) as unknown as ForwardRpc;

/** Starts the run and runs its first activation: the model request is handed off (held), not yet consumed. */
async function handedOff(id: string) {
  const held = holdDispatches();
  await stub(id).start({ id, worker: WORKER, input: { input: "go" }, approvalMode: "ask", budget: {} });
  await runDurableObjectAlarm(env.RUNS.getByName(id));
  expect(held).toHaveLength(1);
  return held;
}

/** What forwarding each answer cost, as the consumer reports it. */
function forwardStats(): ForwardStats[] {
  const stats: ForwardStats[] = [];
  vi.spyOn(liveText, "forwarded").mockImplementation((_key, s) => void stats.push({ ...s }));
  return stats;
}

/** Each forward's round trip into the object, in ms (what the object is kept active for, at most). */
function timedForwards(): number[] {
  const ms: number[] = [];
  const forward = liveText.forward.bind(liveText);
  vi.spyOn(liveText, "forward").mockImplementation(async (...args) => {
    const began = Date.now();
    try {
      return await forward(...args);
    } finally {
      ms.push(Date.now() - began);
    }
  });
  return ms;
}

/** A subscriber of `GET /runs/:id/events?deltas=1`: every event, in order, until the stream ends. */
async function watch(id: string): Promise<() => Promise<Array<{ event: string; data: unknown }>>> {
  const res = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}/events?deltas=1`, { headers: { Authorization: "Bearer test-token" } }));
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const events: Array<{ event: string; data: unknown }> = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(frame)?.[1];
        const data = /^data: ?(.*)$/m.exec(frame)?.[1];
        if (event) events.push({ event, data: data ? JSON.parse(data) : null });
        if (event === "end") return events;
      }
    }
  })();
  return () => done;
}

describe("live text in queue mode", () => {
  it("the consumer's streamed text reaches the run page's subscribers in order, throttled; the recorded answer is the model's whole text", async () => {
    await writing();
    const id = "lq-stream";
    const held = await handedOff(id);
    const stats = forwardStats();
    const rpcMs = timedForwards();
    const events = await watch(id);
    const began = Date.now();
    await consume(held.splice(0));
    const consumerMs = Date.now() - began;
    const view = await settleQueued(id, held);
    expect(view).toMatchObject({ status: "succeeded", output: TEXT });
    const seen = await events();
    const deltas = seen.filter((e) => e.event === "model_delta").map((e) => e.data as { stream: number; text: string });
    // Several forwards, each several pieces (not one per token), all of one stream, in the model's order.
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(new Set(deltas.map((d) => d.stream)).size).toBe(1);
    const streamed = deltas.map((d) => d.text).join("");
    expect(streamed.length).toBeGreaterThan(PIECES[0]!.length);
    expect(TEXT.startsWith(streamed)).toBe(true);
    // Live text comes before the recorded turn, which carries the whole answer.
    const turn = seen.findIndex((e) => e.event === "turn");
    expect(seen.findIndex((e) => e.event === "model_delta")).toBeLessThan(turn);
    expect(seen[turn]!.data).toMatchObject({ text: TEXT });
    expect(stats).toHaveLength(1);
    const [s] = stats;
    expect(s!.failed).toBe(0);
    expect(s!.forwards).toBeLessThan(PIECES.length / 2);
    expect(s!.forwards).toBeLessThanOrEqual(Math.ceil(consumerMs / DEFAULT_DELTA_INTERVAL_MS) + 1);
    // Nothing kept once the answer is in.
    expect((await stub(id).deltasSince(0)).deltas).toEqual([]);
    expect(rpcMs).toHaveLength(s!.forwards);
    const total = rpcMs.reduce((a, b) => a + b, 0);
    console.log(
      `live text probe: ${s!.forwards} forwards (${s!.chars} chars) for one ${consumerMs} ms answer of ${PIECES.length} pieces; ` +
        `forward round trips ${total} ms in all (max ${Math.max(...rpcMs)} ms), an upper bound of the object's active time they add`,
    );
  });

  it("with no page open the consumer forwards once, then only every few seconds (the text still reaches the object, for a page that opens later)", async () => {
    await writing();
    const id = "lq-unwatched";
    const held = await handedOff(id);
    const stats = forwardStats();
    await consume(held.splice(0));
    // The first forward learns nobody watches; the next would be UNWATCHED_INTERVAL_MS later, after this one-second answer.
    expect(stats.map((s) => s.forwards)).toEqual([1]);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: TEXT });
  });

  it("a request nobody claimed, which the run's object then asks itself, streams from the object as in direct mode", async () => {
    await script(WORKER, [{ text: "Asked here, at last.", chunks: ["Asked here, ", "at last."], gate: "lq-unclaimed" }]);
    const id = "lq-unclaimed";
    const held = await handedOff(id);
    held.splice(0); // the message is lost
    await timeOutHandOffs(id);
    const activation = runDurableObjectAlarm(env.RUNS.getByName(id));
    let seen: string[] = [];
    for (let i = 0; i < 200 && !seen.length; i++) {
      seen = (await stub(id).deltasSince(0)).deltas.map((d) => d.text);
      if (!seen.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toEqual(["Asked here, "]);
    await fetch(`${env.FAKE_OPENAI_URL}/gates/lq-unclaimed`, { method: "POST" });
    await activation;
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "Asked here, at last." });
    expect((await stub(id).deltasSince(0)).deltas).toEqual([]);
  });

  it("MODEL_DELTA_INTERVAL_MS: 0 turns live text off; a bad value turns it off too, said in the log, and never fails the model request", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const withVar = (v: string | undefined) => ({ ...env, MODEL_DELTA_INTERVAL_MS: v }) as Env;
    expect(deltaIntervalMs(withVar(undefined))).toBe(DEFAULT_DELTA_INTERVAL_MS);
    expect(deltaIntervalMs(withVar("0"))).toBe(0);
    expect(warn).not.toHaveBeenCalled();
    expect(deltaIntervalMs(withVar("fast"))).toBe(0);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/model_delta_interval_invalid.*MODEL_DELTA_INTERVAL_MS must be a non-negative number, got \\"fast\\"/);
  });

  it("forwards write no row: a run streaming to the object writes as many rows as one whose forwards go nowhere", async () => {
    const stats = forwardStats();
    const rows: number[] = [];
    for (const [id, forwardsReachObject] of [
      ["lq-rows-live", true],
      ["lq-rows-dark", false],
    ] as const) {
      await writing();
      const held = await handedOff(id);
      // A page open on the run: forwards go at the fast interval.
      await stub(id).deltasSince(0);
      const dark = forwardsReachObject ? null : vi.spyOn(liveText, "forward").mockResolvedValue({ watched: true });
      await consume(held.splice(0));
      expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: TEXT });
      rows.push((await stub(id).storageStats()).rowsWritten);
      dark?.mockRestore();
    }
    expect(stats.map((s) => s.forwards).every((n) => n >= 2)).toBe(true);
    expect(rows[0]).toBe(rows[1]);
  });

  it("a forward that fails or never answers does not fail, delay or change the answer", async () => {
    const stats = forwardStats();
    for (const [id, forward] of [
      ["lq-fails", () => Promise.reject(new Error("object unreachable"))],
      ["lq-hangs", () => new Promise<never>(() => {})],
    ] as const) {
      await writing();
      const held = await handedOff(id);
      const spy = vi.spyOn(liveText, "forward").mockImplementation(forward);
      const began = Date.now();
      const result = await consume(held.splice(0));
      expect(Date.now() - began, id).toBeLessThan(PIECES.length * 40 + 1_500);
      expect(result.explicitAcks, id).toHaveLength(1);
      expect(spy, id).toHaveBeenCalled();
      spy.mockRestore();
      expect(await settleQueued(id, held), id).toMatchObject({ status: "succeeded", output: TEXT });
    }
    expect(stats[0]!.failed).toBe(stats[0]!.forwards);
    expect(stats[0]!.forwards).toBeGreaterThanOrEqual(2);
  });

  it("the object takes forwarded text only from the claim in force, in order, and drops it when the answer is delivered", async () => {
    const id = "lq-claims";
    await script(WORKER, [{ text: "done" }]);
    const held = await handedOff(id);
    const { key, attempt } = held[0]!;
    expect(key).toBe(KEY);
    const deltas = async () => (await stub(id).deltasSince(0)).deltas.map((d) => d.text);
    // Before any claim: nothing is taken, and no page has read yet.
    expect(await rpc(id).forwardModelText(key, attempt, 1, "unclaimed")).toEqual({ watched: false });
    expect(await rpc(id).claimModelRequest(key, attempt)).not.toBeNull();
    await rpc(id).forwardModelText(key, attempt, 2, "second");
    // A forward given up on that lands late, another attempt's and another key's: all dropped.
    await rpc(id).forwardModelText(key, attempt, 1, "first, late");
    await rpc(id).forwardModelText(key, attempt + 1, 3, "another attempt");
    await rpc(id).forwardModelText(`${WORKER}/turn:2/model`, attempt, 3, "another key");
    expect(await deltas()).toEqual(["second"]);
    // A page has read: the consumer is told so.
    expect(await rpc(id).forwardModelText(key, attempt, 3, " third")).toEqual({ watched: true });
    expect(await deltas()).toEqual(["second", " third"]);
    // Model text is bounded in the object whatever a consumer sends.
    await rpc(id).forwardModelText(key, attempt, 4, "x".repeat(200_000));
    expect((await deltas()).join("").length).toBeLessThanOrEqual(64 * 1024);
    const answer = { ok: true, response: { text: "done", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } } };
    expect(await rpc(id).deliverModelAnswer(key, attempt, answer)).toEqual({ recorded: true });
    expect(await deltas()).toEqual([]);
    await rpc(id).forwardModelText(key, attempt, 5, "after the answer");
    expect(await deltas()).toEqual([]);
    expect(await settleQueued(id, held)).toMatchObject({ status: "succeeded", output: "done" });
  });
});
