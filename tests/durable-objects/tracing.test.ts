import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CallNode } from "../../src/engine/journal/call-tree";
import { sha256Hex } from "../../src/engine/run/idempotency-key";
import type { OtelVars } from "../../src/otel/exporter";
import type { RunView } from "../../src/runs/types";
import { effectCount, modelRequests, settle, stub } from "./helpers";
import { NESTED_EFFECTS, scriptNestedRun } from "./nested-run";

/** A span as the receiver decoded it (OTLP/HTTP JSON). */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  events: Array<{ name: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }>;
  status?: { code: number; message?: string };
}
interface Received {
  headers: Record<string, unknown>;
  body: { resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: Span[] }> }> };
}

const sinkUrl = (sink: string) => `${env.OTLP_RECEIVER_URL}/sink/${sink}`;

async function received(sink: string): Promise<Received[]> {
  return ((await (await fetch(sinkUrl(sink))).json()) as { requests: Received[] }).requests;
}

const spansOf = (requests: Received[]) => requests.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));

/** Exports leave after the activation (waitUntil): wait until the run's own span (no parent) has arrived. */
async function traceOf(sink: string): Promise<{ requests: Received[]; spans: Span[] }> {
  for (let i = 0; i < 100; i++) {
    const requests = await received(sink);
    const spans = spansOf(requests);
    if (spans.some((s) => s.parentSpanId === undefined)) return { requests, spans };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no root span arrived at sink ${sink}`);
}

const attr = (span: { attributes: Span["attributes"] }, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v && Object.values(v)[0];
};

/** The nested run of the eviction tests under its own fixtures: runs to the end, approving the one approval. */
async function tracedRun(id: string, vars: OtelVars, fault?: { atJournalSize: number; mode: "throw" | "abort" }) {
  await scriptNestedRun(id, "trace");
  await stub(id).start({ id, worker: "trace-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  await stub(id).setOtelVars(vars);
  if (fault) await stub(id).setTestHooks({ fault });
  const count = { activations: 0, failed: 0 };
  let view = await settle(id, { count });
  while (view.status === "awaiting_approval") {
    const pending = view.approvals.find((a) => a.status === "pending")!;
    expect((await stub(id).decide(pending.id, { decision: "approve", by: "test" })).ok).toBe(true);
    view = await settle(id, { count });
  }
  return { view, count };
}

/** A node of a tree as names and tool-call ids, children in a fixed order: the shape two trees are compared by. */
interface Shape {
  name: string;
  callId?: string;
  children: Shape[];
}
const sorted = (children: Shape[]) => children.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** What the spans should be, from the run's call tree (GET /runs/:id): a worker call, its model requests, its tool calls. */
function expectedShape(call: CallNode): Shape {
  const chats = Array.from({ length: call.usage.requests }, () => ({ name: "chat openai:trace", children: [] }));
  const tools = call.tools.map((t) => ({ name: `execute_tool ${t.name}`, callId: t.id, children: sorted(t.calls.map(expectedShape)) }));
  return { name: `invoke_agent ${call.worker}`, children: sorted([...chats, ...tools]) };
}

/** The spans as a tree by their parent ids (chat spans' model names cut to the fixture's prefix). */
function spanShape(span: Span, spans: Span[]): Shape {
  const children = spans.filter((s) => s.parentSpanId === span.spanId).map((s) => spanShape(s, spans));
  const name = span.name.startsWith("chat ") ? "chat openai:trace" : span.name;
  const callId = attr(span, "gen_ai.tool.call.id") as string | undefined;
  return { name, ...(callId === undefined ? {} : { callId }), children: sorted(children) };
}

function expectOneTraceOfTheRun(id: string, spans: Span[]): Span {
  expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([sha256Hex(id).slice(0, 32)]));
  expect(new Set(spans.map((s) => s.spanId)).size, "no span sent twice").toBe(spans.length);
  const roots = spans.filter((s) => s.parentSpanId === undefined);
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

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
