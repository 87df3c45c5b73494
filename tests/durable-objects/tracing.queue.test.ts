import { describe, expect, it } from "vitest";
import { expectedShape, expectOneTraceOfTheRun, sinkUrl, spanShape, traceOf, tracedRun } from "./otlp-trace";
import { holdDispatches, settleQueued } from "./queue-dispatch";

describe("OpenTelemetry traces of a run in queue mode", () => {
  it("each model request's span starts at its hand-off and shows it; still one trace whose tree is the call tree", async () => {
    const id = "trace-queued";
    const held = holdDispatches();
    const { view } = await tracedRun(id, { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl(id) }, undefined, (run, opts) => settleQueued(run, held, opts));
    expect(view).toMatchObject({ status: "succeeded", output: "outer done" });
    const { spans } = await traceOf(id);
    const root = expectOneTraceOfTheRun(id, spans);
    expect(spans).toHaveLength(15);
    expect(spanShape(root, spans)).toEqual(expectedShape(view.call_tree!));
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats).toHaveLength(6);
    for (const chat of chats) {
      expect(chat.events.map((e) => e.name)).toEqual(["edgework.queue.handoff"]);
      expect(chat.events[0]!.attributes).toEqual([{ key: "edgework.queue.attempt", value: { intValue: "1" } }]);
      expect((chat.events[0] as unknown as { timeUnixNano: string }).timeUnixNano).toBe(chat.startTimeUnixNano);
    }
  });
});
