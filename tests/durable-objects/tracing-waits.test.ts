import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunView } from "../../src/runs/types";
import { captureMail } from "../email/support";
import { effectUrl, script, settle, stub } from "./helpers";
import { attr, expectOneTraceOfTheRun, sinkUrl, traceOf, type Span } from "./otlp-trace";

afterEach(() => vi.restoreAllMocks());

const MIN = 60_000;
const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);

/** The wait events of a span, as name, time (ms) and attributes. */
const waitEvents = (span: Span): Array<Record<string, unknown> & { name: string; at: number }> =>
  span.events
    .filter((e) => e.name.startsWith("edgework.wait."))
    .map((e) => ({ name: e.name, at: ms(e.timeUnixNano), ...Object.fromEntries(e.attributes.map((a) => [a.key, attr(e, a.key)])) }));

/** Each wait event lies within its span; none is on any span but `on`. */
function expectWaitsOnlyOn(spans: Span[], on: Span[]) {
  for (const s of spans) {
    const events = waitEvents(s);
    if (!on.includes(s)) expect(events, s.name).toEqual([]);
    for (const e of events) {
      expect(e.at, `${s.name} ${e.name}`).toBeGreaterThanOrEqual(ms(s.startTimeUnixNano));
      expect(e.at, `${s.name} ${e.name}`).toBeLessThanOrEqual(ms(s.endTimeUnixNano));
    }
  }
}

describe("durable waits in a run's trace", () => {
  it("a model's sleep and event wait, each resumed by an evicted activation: one pair of events each, on its tool call's span, at the wait's times", async () => {
    const id = "trace-waits-tools";
    await script("wait-agent", [
      { tool_calls: [{ id: "s", name: "sleep", arguments: { duration: "20m", reason: "deploy" } }] },
      { tool_calls: [{ id: "w", name: "wait_for_event", arguments: { name: "ci_finished", timeout: "1h", key: "sha-1" } }] },
      { text: "done" },
    ]);
    await stub(id).start({ id, worker: "wait-agent", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await stub(id).setOtelVars({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id) });
    const count = { activations: 0, failed: 0 };
    // The journal: turn 1's answer, the sleep's end, its result, turn 2's answer, the event's end, its result, turn 3's answer.
    // Evicted before the sleep's result is recorded, and again before the event wait's.
    await stub(id).setTestHooks({ fault: { atJournalSize: 2, mode: "abort" } });
    const sleeping = await settle(id, { count });
    expect(sleeping.status).toBe("waiting");
    const sleep = sleeping.waits[0]!;
    await stub(id).advanceClock(20 * MIN);
    const waiting = await settle(id, { count });
    expect(waiting).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "ci_finished" }] });
    const event = waiting.waits[0]!;
    await stub(id).setTestHooks({ fault: { atJournalSize: 5, mode: "abort" } });
    expect(await stub(id).deliverEvent({ name: "ci_finished", id: "d-1", key: "sha-1", payload: { ok: true } }, true)).toMatchObject({ applied: true });
    const done: RunView = await settle(id, { count });
    expect(done).toMatchObject({ status: "succeeded", output: "done" });
    expect(count.failed).toBe(2);

    const { spans } = await traceOf(id);
    expectOneTraceOfTheRun(id, spans);
    // 3 model requests, 2 tool calls, the run: none twice after the evictions.
    expect(spans.map((s) => s.name).sort()).toEqual([
      "chat openai:wait-agent",
      "chat openai:wait-agent",
      "chat openai:wait-agent",
      "execute_tool sleep",
      "execute_tool wait_for_event",
      "invoke_agent wait-agent",
    ]);
    const sleepSpan = spans.find((s) => s.name === "execute_tool sleep")!;
    const eventSpan = spans.find((s) => s.name === "execute_tool wait_for_event")!;
    expect(waitEvents(sleepSpan)).toEqual([
      {
        name: "edgework.wait.started",
        at: sleep.created_at,
        "edgework.wait.kind": "sleep",
        "edgework.wait.until": new Date(sleep.until!).toISOString(),
      },
      { name: "edgework.wait.ended", at: expect.any(Number), "edgework.wait.kind": "sleep", "edgework.wait.outcome": "elapsed" },
    ]);
    expect(waitEvents(sleepSpan)[1]!.at).toBeGreaterThanOrEqual(sleep.until!);
    // The correlation key is content: left out.
    expect(waitEvents(eventSpan)).toEqual([
      {
        name: "edgework.wait.started",
        at: event.created_at,
        "edgework.wait.kind": "event",
        "edgework.wait.name": "ci_finished",
        "edgework.wait.until": new Date(event.expires_at).toISOString(),
      },
      { name: "edgework.wait.ended", at: expect.any(Number), "edgework.wait.kind": "event", "edgework.wait.outcome": "delivered" },
    ]);
    // The tool spans begin when their wait did, not when the activation that recorded their result did.
    expect(ms(sleepSpan.startTimeUnixNano)).toBe(sleep.created_at);
    expectWaitsOnlyOn(spans, [sleepSpan, eventSpan]);
  });

  it("a function's waits are on its own span; a timeout says so; with content, the correlation key", async () => {
    const id = "trace-waits-function";
    await stub(id).start({ id, worker: "fn-sleeper", input: { url: effectUrl(id), key: "order-7" }, approvalMode: "ask", budget: {} });
    await stub(id).setOtelVars({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id), OTEL_CAPTURE_CONTENT: "true" });
    expect((await settle(id)).status).toBe("waiting");
    await stub(id).advanceClock(10 * MIN);
    expect((await settle(id)).status).toBe("waiting");
    await stub(id).advanceClock(60 * MIN);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { got: { status: "timed_out" } } });

    const { spans } = await traceOf(id);
    const root = expectOneTraceOfTheRun(id, spans);
    expect(root.name).toBe("invoke_agent fn-sleeper");
    expect(waitEvents(root).map((e) => [e.name, e["edgework.wait.kind"], e["edgework.wait.outcome"] ?? e["edgework.wait.key"] ?? null])).toEqual([
      ["edgework.wait.started", "sleep", null],
      ["edgework.wait.ended", "sleep", "elapsed"],
      ["edgework.wait.started", "event", "order-7"],
      ["edgework.wait.ended", "event", "timed_out"],
    ]);
    expectWaitsOnlyOn(spans, [root]);
  });

  it("a question is a wait too: asked, then answered, on the span of the tool that asked, at the question's times", async () => {
    const id = "trace-waits-question";
    captureMail();
    await script("asker", [
      { tool_calls: [{ id: "q", name: "people_ask", arguments: { question: "41 or 42?", to: "lead@example.com" } }] },
      { text: "reported" },
    ]);
    await stub(id).start({ id, worker: "asker", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await stub(id).setOtelVars({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id) });
    const q = (await settle(id)).approvals[0]!;
    const answered = await exports.default.fetch(
      new Request(`https://edgework.test/runs/${id}/questions/${q.id}`, {
        method: "POST",
        headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
        body: JSON.stringify({ answer: "42" }),
      }),
    );
    expect(answered.status).toBe(200);
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", approvals: [{ kind: "question", status: "approved" }] });

    const { spans } = await traceOf(id);
    expectOneTraceOfTheRun(id, spans);
    const ask = spans.find((s) => s.name === "execute_tool people_ask")!;
    expect(waitEvents(ask)).toEqual([
      {
        name: "edgework.wait.started",
        at: q.created_at,
        "edgework.wait.kind": "question",
        "edgework.wait.until": new Date(q.expires_at).toISOString(),
      },
      { name: "edgework.wait.ended", at: done.approvals[0]!.decided_at, "edgework.wait.kind": "question", "edgework.wait.outcome": "answered" },
    ]);
    expectWaitsOnlyOn(spans, [ask]);
  });
});
