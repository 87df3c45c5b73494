import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { CallNode } from "../../src/engine/journal/call-tree";
import { sha256Hex } from "../../src/engine/run/idempotency-key";
import type { OtelVars } from "../../src/otel/exporter";
import type { RunView } from "../../src/runs/types";
import { settle, stub } from "./helpers";
import { scriptNestedRun } from "./nested-run";

/** What the tracing tests read back from the OTLP receiver (tests/support/otlp-receiver.ts), and the run they trace. */

/** A span as the receiver decoded it (OTLP/HTTP JSON). */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  events: Array<{ name: string; timeUnixNano: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }>;
  status?: { code: number; message?: string };
}
interface Received {
  headers: Record<string, unknown>;
  body: { resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: Span[] }> }> };
}

export const sinkUrl = (sink: string) => `${env.OTLP_RECEIVER_URL}/sink/${sink}`;

async function received(sink: string): Promise<Received[]> {
  return ((await (await fetch(sinkUrl(sink))).json()) as { requests: Received[] }).requests;
}

export const spansOf = (requests: Received[]) => requests.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));

/** Exports leave after the activation (waitUntil): wait until the run's own span (no parent) has arrived. */
export async function traceOf(sink: string): Promise<{ requests: Received[]; spans: Span[] }> {
  for (let i = 0; i < 100; i++) {
    const requests = await received(sink);
    const spans = spansOf(requests);
    if (spans.some((s) => s.parentSpanId === undefined)) return { requests, spans };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no root span arrived at sink ${sink}`);
}

export const attr = (span: { attributes: Span["attributes"] }, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v && Object.values(v)[0];
};

/** The nested run of the eviction tests under its own fixtures: runs to the end (`drive`), approving the one approval. */
export async function tracedRun(
  id: string,
  vars: OtelVars,
  fault?: { atJournalSize: number; mode: "throw" | "abort" },
  drive: (id: string, opts: { count: { activations: number; failed: number } }) => Promise<RunView> = settle,
) {
  await scriptNestedRun(id, "trace");
  await stub(id).start({ id, worker: "trace-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  await stub(id).setOtelVars(vars);
  if (fault) await stub(id).setTestHooks({ fault });
  const count = { activations: 0, failed: 0 };
  let view = await drive(id, { count });
  while (view.status === "awaiting_approval") {
    const pending = view.approvals.find((a) => a.status === "pending")!;
    expect((await stub(id).decide(pending.id, { decision: "approve", by: "test", decider: { email: "lead@example.com", via: "link" } })).ok).toBe(true);
    view = await drive(id, { count });
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
export function expectedShape(call: CallNode): Shape {
  const chats = Array.from({ length: call.usage.requests }, () => ({ name: "chat openai:trace", children: [] }));
  const tools = call.tools.map((t) => ({ name: `execute_tool ${t.name}`, callId: t.id, children: sorted(t.calls.map(expectedShape)) }));
  return { name: `invoke_agent ${call.worker}`, children: sorted([...chats, ...tools]) };
}

/** The spans as a tree by their parent ids (chat spans' model names cut to the fixture's prefix). */
export function spanShape(span: Span, spans: Span[]): Shape {
  const children = spans.filter((s) => s.parentSpanId === span.spanId).map((s) => spanShape(s, spans));
  const name = span.name.startsWith("chat ") ? "chat openai:trace" : span.name;
  const callId = attr(span, "gen_ai.tool.call.id") as string | undefined;
  return { name, ...(callId === undefined ? {} : { callId }), children: sorted(children) };
}

export function expectOneTraceOfTheRun(id: string, spans: Span[]): Span {
  expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([sha256Hex(id).slice(0, 32)]));
  expect(new Set(spans.map((s) => s.spanId)).size, "no span sent twice").toBe(spans.length);
  const roots = spans.filter((s) => s.parentSpanId === undefined);
  expect(roots).toHaveLength(1);
  return roots[0]!;
}
