import { sha256Hex } from "../engine/run/idempotency-key";
import { spanParent, type SpanValue, type TraceSpan } from "../engine/trace/span";

/**
 * Spans as OTLP/HTTP JSON (opentelemetry-proto's `ExportTraceServiceRequest` in its
 * JSON mapping: ids in hex, 64-bit integers and nanosecond times as strings). Written
 * out here rather than through @opentelemetry/* (its SDK and exporters would take most
 * of what is left of the bundle budget; the wire format is small and stable).
 *
 * Ids come from the run, never from a counter: the trace id is the first 16 bytes of
 * SHA-256 of the run id, a span id the first 8 of SHA-256 of run id and journal path.
 * Every activation of a run lands in one trace, and a span made twice would have one id. A child
 * run (`ctx.spawn`) joins its root run's trace, its root span under the parent's spawning call.
 */
export interface RunIds {
  trace: string;
  span(path: string): string;
  /** A child run's: the span of its parent's call that spawned it, which its root span lies in. */
  rootParent?: string;
}

/** A child run's place in its parent's trace: the tree's root run (whose trace it joins), its parent, and the spawn's journal key. */
export interface TraceParent {
  root: string;
  run: string;
  key: string;
}

/**
 * The ids of spans and their parents, each path hashed once. SHA-256 in JS (the engine's
 * own, synchronous): for ~40 short keys a third of the CPU of `crypto.subtle`'s calls (Node, bench/trace-cost.ts).
 */
export function runIds(runId: string, spans: readonly TraceSpan[], parent?: TraceParent): RunIds {
  const byPath = new Map<string, string>();
  const id = (path: string) => byPath.get(path) ?? byPath.set(path, sha256Hex(`${runId}\n${path}`).slice(0, 16)).get(path)!;
  for (const s of spans) {
    id(s.path);
    if (s.parent !== undefined) id(s.parent);
  }
  if (!parent) return { trace: sha256Hex(runId).slice(0, 32), span: id };
  // One trace for a tree of runs: the root run's; the child's root span lies in the parent's span of the spawning call.
  const spawnedIn = spanParent(parent.key) ?? parent.key;
  return { trace: sha256Hex(parent.root).slice(0, 32), span: id, rootParent: sha256Hex(`${parent.run}\n${spawnedIn}`).slice(0, 16) };
}

const SPAN_KIND = { internal: 1, client: 3 } as const;
const STATUS_ERROR = 2;

/** One span as its JSON text (measured one by one, so a batch can be cut to a byte bound). */
export function spanJson(ids: RunIds, span: TraceSpan): string {
  return JSON.stringify({
    traceId: ids.trace,
    spanId: ids.span(span.path),
    ...(span.parent !== undefined ? { parentSpanId: ids.span(span.parent) } : ids.rootParent ? { parentSpanId: ids.rootParent } : {}),
    name: span.name,
    kind: SPAN_KIND[span.kind],
    startTimeUnixNano: nanos(span.start),
    endTimeUnixNano: nanos(Math.max(span.start, span.end)),
    attributes: attributes(span.attributes),
    events: span.events.map((e) => ({ timeUnixNano: nanos(e.at), name: e.name, attributes: attributes(e.attributes) })),
    ...(span.error ? { status: { code: STATUS_ERROR, ...(span.error.message ? { message: span.error.message } : {}) } } : {}),
  });
}

/** The request body around spans already made JSON by `spanJson`. */
export function exportRequest(serviceName: string, spans: readonly string[]): string {
  const resource = { attributes: attributes({ "service.name": serviceName }) };
  return `{"resourceSpans":[{"resource":${JSON.stringify(resource)},"scopeSpans":[{"scope":{"name":"edgework"},"spans":[${spans.join(",")}]}]}]}`;
}

function attributes(attrs: Record<string, SpanValue>) {
  return Object.entries(attrs).map(([key, v]) => ({ key, value: anyValue(v) }));
}

function anyValue(v: SpanValue) {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

/** Milliseconds since the epoch as OTLP's decimal nanoseconds (a string: past 2^53). */
const nanos = (ms: number) => `${Math.max(0, Math.round(ms))}000000`;
