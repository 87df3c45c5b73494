import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TraceSpan } from "../../src/engine/trace/span";
import { exportSpans, otlpSettings, parseHeaders, type OtlpSettings } from "../../src/otel/exporter";

const settings: OtlpSettings = {
  url: "http://collector.test/v1/traces",
  headers: { authorization: "Bearer otel-s3cret" },
  captureContent: false,
  serviceName: "edgework",
};
const span = (i: number, attributes: TraceSpan["attributes"] = {}): TraceSpan => ({
  path: `w/turn:${i}/model`,
  parent: "w",
  name: "chat test:x",
  kind: "client",
  start: 1_700_000_000_000 + i,
  end: 1_700_000_000_005 + i,
  attributes,
  events: [],
});

/** A collector stub: keeps each body it is sent, answers `status`. */
function collector(status = 200) {
  const bodies: Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> }> = [];
  const send = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(init.body as string));
    return new Response("{}", { status });
  }) as typeof fetch;
  return { send, bodies, spans: () => bodies.flatMap((b) => b.resourceSpans[0]!.scopeSpans[0]!.spans) };
}

describe("the OTLP exporter", () => {
  it("sends one request per batch, cut at the span bound: the rest is dropped and counted, not queued", async () => {
    const c = collector();
    const result = await exportSpans(
      "run-1",
      Array.from({ length: 10 }, (_, i) => span(i)),
      settings,
      c.send,
      { maxSpans: 4, maxBytes: 1 << 20, timeoutMs: 1000 },
    );
    expect(c.bodies).toHaveLength(1);
    expect(c.spans()).toHaveLength(4);
    expect(result).toMatchObject({ sent: 4, dropped: 6 });
    expect(result.bytes).toBe(new TextEncoder().encode(JSON.stringify(c.bodies[0])).length);
  });

  it("cuts a batch at the byte bound (a span with a huge attribute does not ride along)", async () => {
    const c = collector();
    const spans = [span(1), span(2, { big: "x".repeat(5000) }), span(3)];
    const result = await exportSpans("run-1", spans, settings, c.send, { maxSpans: 100, maxBytes: 4000, timeoutMs: 1000 });
    expect(c.spans().map((s) => s.name)).toHaveLength(1);
    expect(result).toMatchObject({ sent: 1, dropped: 2 });
    expect(result.bytes).toBeLessThan(4000);
  });

  it("gives up at the timeout, and names a failure without its message (a runtime's error may quote a header)", async () => {
    const hanging = ((_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))) as typeof fetch;
    const started = Date.now();
    const slow = await exportSpans("run-1", [span(1)], settings, hanging, { maxSpans: 10, maxBytes: 1 << 20, timeoutMs: 50 });
    expect(slow).toMatchObject({ sent: 0, failed: "TimeoutError" });
    expect(Date.now() - started).toBeLessThan(2000);
    const leaky = (async () => {
      throw new TypeError("invalid header value: Bearer otel-s3cret");
    }) as typeof fetch;
    const failed = await exportSpans("run-1", [span(1)], settings, leaky);
    expect(failed).toMatchObject({ sent: 0, failed: "TypeError" });
    expect(JSON.stringify(failed)).not.toContain("s3cret");
    expect(await exportSpans("run-1", [span(1)], settings, collector(500).send)).toMatchObject({ sent: 0, failed: "HTTP 500" });
  });

  it("hostile collector: a redirect is a failure, never followed, so the configured headers never reach another origin", async () => {
    const id = "otlp-redirect";
    const elsewhere = `${env.FAKE_UPSTREAM_B}/${id}/echo`;
    for (const status of [301, 302, 307, 308]) {
      const url = `${env.FAKE_UPSTREAM_A}/${id}/redirect/${status}?to=${encodeURIComponent(elsewhere)}`;
      expect(await exportSpans("run-1", [span(1)], { ...settings, url })).toMatchObject({ sent: 0, failed: `HTTP ${status}` });
    }
    const seen = (await (await fetch(`${env.FAKE_UPSTREAM_A}/log/${id}`)).json()) as { requests: Array<{ path: string }> };
    // Only the collector's own origin was asked: nothing reached the echo the redirects named.
    expect(seen.requests.map((r) => r.path)).toEqual([301, 302, 307, 308].map((status) => `/${id}/redirect/${status}`));
  });

  it("writes ids from the run and the journal path: the same span from two activations has one id", async () => {
    const c = collector();
    await exportSpans("run-1", [span(1)], settings, c.send);
    await exportSpans("run-1", [span(1), span(2)], settings, c.send);
    await exportSpans("run-2", [span(1)], settings, c.send);
    const [a, b, c2, other] = c.spans();
    expect(a!.spanId).toBe(b!.spanId);
    expect(a!.spanId).not.toBe(c2!.spanId);
    expect(a!.parentSpanId).toBe(c2!.parentSpanId);
    expect(a!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a!.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(other!.traceId).not.toBe(a!.traceId);
    expect(a).toMatchObject({ kind: 3, startTimeUnixNano: "1700000000001000000", endTimeUnixNano: "1700000000006000000" });
  });

  it("reads the standard variables; no endpoint or a non-http one leaves tracing off", () => {
    expect(otlpSettings({})).toBeNull();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector.test" })).toBeNull();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" })).toBeNull();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.test/otlp/", OTEL_CAPTURE_CONTENT: "TRUE" })).toMatchObject({
      url: "https://collector.test/otlp/v1/traces",
      captureContent: true,
      serviceName: "edgework",
    });
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.test/traces", OTEL_EXPORTER_OTLP_ENDPOINT: "https://other.test" })!.url).toBe(
      "https://collector.test/traces",
    );
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://c.test", OTEL_CAPTURE_CONTENT: "1" })!.captureContent).toBe(false);
    expect(parseHeaders("authorization=Bearer%20abc, x-a = b ,bad,=nokey,broken=%E0%A4%A")).toEqual({ authorization: "Bearer abc", "x-a": "b" });
  });
});

describe("one trace spans a tree of runs (child runs)", () => {
  it("a child's spans carry its root run's trace id, and its root span lies in the parent's span of the spawning call", async () => {
    const { runIds, spanJson } = await import("../../src/otel/otlp-json");
    const { sha256Hex } = await import("../../src/engine/run/idempotency-key");
    const root: TraceSpan = { name: "child", kind: "internal", path: "fn-child-item", start: 1, end: 2, attributes: {}, events: [] };
    const inner: TraceSpan = { ...root, name: "call", path: "fn-child-item/call:1", parent: "fn-child-item" };
    const parent = { root: "tree-root", run: "parent-run", key: "lead/turn:1/tool:2/spawn:1" };
    const ids = runIds("child-run", [root, inner], parent);
    const [r, i] = [root, inner].map((s) => JSON.parse(spanJson(ids, s)) as { traceId: string; parentSpanId?: string; spanId: string });
    expect(r!.traceId).toBe(sha256Hex("tree-root").slice(0, 32));
    expect(i!.traceId).toBe(r!.traceId);
    // The parent's span for its tool call lead/turn:1/tool:2, as the parent's own export names it.
    expect(r!.parentSpanId).toBe(runIds("parent-run", []).span("lead/turn:1/tool:2"));
    expect(i!.parentSpanId).toBe(r!.spanId);
    // A run that is no child: its own trace, a root span with no parent.
    const alone = JSON.parse(spanJson(runIds("child-run", [root]), root)) as { traceId: string; parentSpanId?: string };
    expect(alone).toMatchObject({ traceId: sha256Hex("child-run").slice(0, 32) });
    expect(alone.parentSpanId).toBeUndefined();
  });
});
