import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RunView } from "../../src/runs/types";
import { effectCount, modelRequests, settle, stub } from "./helpers";
import { NESTED_EFFECTS, scriptNestedRun } from "./nested-run";
import { attr, expectedShape, expectOneTraceOfTheRun, sinkUrl, spanShape, traceOf, tracedRun } from "./otlp-trace";

async function expectRunUnchanged(id: string, view: RunView) {
  expect(view).toMatchObject({ status: "succeeded", output: "outer done" });
  for (const e of NESTED_EFFECTS) expect(await effectCount(`${id}-${e}`), `effect ${e}`).toBe(1);
}

describe("OpenTelemetry traces of a run", () => {
  it("a nested run with tools, an approval and an interrupted activation is one trace whose span tree is the call tree, no span twice", async () => {
    const id = "trace-tree";
    const headers = "authorization=Bearer%20otel-s3cret,x-tenant=acme";
    const { view, count } = await tracedRun(
      id,
      { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id), OTEL_EXPORTER_OTLP_HEADERS: headers },
      { atJournalSize: 6, mode: "throw" },
    );
    await expectRunUnchanged(id, view);
    expect(count.failed).toBe(1);
    const { requests, spans } = await traceOf(id);
    const root = expectOneTraceOfTheRun(id, spans);
    // 7 tool calls, 6 model requests, 2 worker calls.
    expect(spans).toHaveLength(15);
    expect(spanShape(root, spans)).toEqual(expectedShape(view.call_tree!));
    // Batched per activation: one request per activation that made spans, at most.
    expect(requests.length).toBeLessThanOrEqual(count.activations);
    expect(requests[0]!.headers).toMatchObject({ authorization: "Bearer otel-s3cret", "x-tenant": "acme", "content-type": "application/json" });
    // GenAI attributes.
    expect(attr(root, "gen_ai.operation.name")).toBe("invoke_agent");
    expect(attr(root, "gen_ai.agent.name")).toBe("trace-outer");
    expect(attr(root, "edgework.run.id")).toBe(id);
    const chat = spans.find((s) => s.name.startsWith("chat "))!;
    expect(chat.kind).toBe(3);
    expect(attr(chat, "gen_ai.operation.name")).toBe("chat");
    expect(attr(chat, "gen_ai.request.model")).toBe("openai:trace-outer");
    expect(attr(chat, "gen_ai.usage.input_tokens")).toMatch(/^\d+$/);
    expect(Number(attr(chat, "gen_ai.usage.output_tokens"))).toBeGreaterThan(0);
    // The approval is on its tool call's span.
    const danger = spans.find((s) => s.name === "execute_tool danger_fetch")!;
    expect(attr(danger, "gen_ai.operation.name")).toBe("execute_tool");
    expect(attr(danger, "gen_ai.tool.name")).toBe("danger_fetch");
    expect(danger.events.map((e) => e.name)).toEqual(["edgework.approval.requested", "edgework.approval.decided"]);
    expect(attr(danger.events[1]!, "edgework.approval.approved")).toBe(true);
    // The decision's audit: how it ended the call, the way it came, who, on which arguments.
    expect(attr(danger.events[1]!, "edgework.approval.outcome")).toBe("approved");
    expect(attr(danger.events[1]!, "edgework.approval.via")).toBe("link");
    expect(attr(danger.events[1]!, "enduser.id")).toBe("lead@example.com");
    expect(attr(danger.events[1]!, "edgework.approval.args_sha256")).toMatch(/^[0-9a-f]{32}$/);
    // No content unless asked for.
    expect(
      spans.flatMap((s) => s.attributes.map((a) => a.key)).filter((k) => k.includes("arguments") || k.includes("result") || k.includes("messages")),
    ).toEqual([]);
    for (const s of spans) expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano), s.name).toBe(true);
  });

  it("an evicted activation loses at most its own spans: still one trace, no span twice", async () => {
    const id = "trace-abort";
    const { view } = await tracedRun(id, { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id) }, { atJournalSize: 6, mode: "abort" });
    await expectRunUnchanged(id, view);
    const { spans } = await traceOf(id);
    expectOneTraceOfTheRun(id, spans);
    expect(spans.length).toBeLessThanOrEqual(15);
  });

  it("content only with OTEL_CAPTURE_CONTENT=true: tool arguments and results as the journal holds them", async () => {
    const id = "trace-content";
    const { view } = await tracedRun(id, { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id), OTEL_CAPTURE_CONTENT: "true" });
    await expectRunUnchanged(id, view);
    const { spans } = await traceOf(id);
    const danger = spans.find((s) => s.name === "execute_tool danger_fetch")!;
    expect(JSON.parse(attr(danger, "gen_ai.tool.call.arguments") as string)).toMatchObject({ method: "POST", body: "i3" });
    expect(attr(danger, "gen_ai.tool.call.result")).toBeTypeOf("string");
    const chat = spans.find((s) => s.name.startsWith("chat ") && attr(s, "gen_ai.output.messages")?.toString().includes("outer done"));
    expect(chat).toBeDefined();
  });

  it("a run cancelled while paused ends its trace: the root span arrives with status cancelled, over the spans sent before", async () => {
    const id = "trace-cancelled";
    await scriptNestedRun(id, "trace");
    await stub(id).start({ id, worker: "trace-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await stub(id).setOtelVars({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id) });
    expect((await settle(id)).status).toBe("awaiting_approval");
    expect((await stub(id).cancel()).ok).toBe(true);
    const { spans } = await traceOf(id);
    const root = expectOneTraceOfTheRun(id, spans);
    expect(attr(root, "edgework.run.status")).toBe("cancelled");
    // Before the pause: 3 model requests, 3 tool calls done (o1, i1, i2; danger_fetch waits, the inner worker with it).
    expect(spans.filter((s) => s.name.startsWith("chat "))).toHaveLength(3);
    expect(
      spans
        .filter((s) => s.name.startsWith("execute_tool "))
        .map((s) => s.name)
        .sort(),
    ).toEqual(Array(3).fill("execute_tool fx_fetch"));
    // Their parents not sent (the inner worker, its tool call) are left open, never made up.
    expect(spans).toHaveLength(7);
  });

  for (const [what, endpoint] of [
    ["a dead endpoint", "http://127.0.0.1:1"],
    ["an endpoint answering 500", `${env.OTLP_RECEIVER_URL}/status/500`],
    ["an endpoint that never answers", `${env.OTLP_RECEIVER_URL}/slow`],
  ] as const) {
    it(`${what} changes nothing in the run`, async () => {
      const id = `trace-${what.replaceAll(" ", "-")}`;
      const started = Date.now();
      const { view, count } = await tracedRun(id, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
      await expectRunUnchanged(id, view);
      expect(count).toEqual({ activations: 2, failed: 0 });
      expect(await modelRequests("trace-outer")).toHaveLength(3);
      // The export is not waited for: the run is not held by the exporter's 5 s timeout.
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  }
});
