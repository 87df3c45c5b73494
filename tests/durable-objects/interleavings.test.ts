import { afterAll, describe, expect, it } from "vitest";
import { IO_POINTS, type IoPoint } from "../../durable-objects/run/io";
import { conversation, interleave, pipeline, REQUESTS, type Request, type Scenario } from "./harness";
import { DIRECT_POINTS, HELD_ELSEWHERE, QUEUE_POINTS, type Held } from "./harness-points";

/**
 * The interleaving harness in direct dispatch (harness.ts): every io point of a run's
 * object that this mode passes, held before its I/O starts and after it completed, with
 * every external request landed there. The queue-mode points are in
 * interleavings.queue.test.ts; together they cover every point of io.ts.
 */

const deliverNothing = async () => null;
let interleavings = 0;
let violated = 0;
const run = async (sc: Scenario, { point, passes, after }: Held, request: Request) => {
  const violations: string[] = [];
  for (const when of after ? (["before", "after"] as const) : (["before"] as const)) {
    for (const occurrence of passes) {
      const r = await interleave(sc, { point, when }, request, occurrence);
      expect(r.landed, `${point} (${when}, pass ${occurrence}) is reached by ${sc.tag}`).toBe(1);
      interleavings++;
      violated += r.violations.length;
      violations.push(...r.violations);
    }
  }
  expect(violations).toEqual([]);
};

afterAll(() => console.log(`interleaving harness (direct): ${interleavings} interleavings, ${violated} invariant violations`));

describe("the interleaving harness, direct dispatch", () => {
  it("the two modes together cover every io point of io.ts", () => {
    expect(new Set([...DIRECT_POINTS, ...QUEUE_POINTS].map((h) => h.point).concat(Object.keys(HELD_ELSEWHERE) as IoPoint[]))).toEqual(new Set(IO_POINTS));
  });

  describe.each(DIRECT_POINTS.map((h) => [h.point, h] as const))("held at %s", (_point, held) => {
    it.each(REQUESTS)("lands %s there: the invariants hold", async (request) => {
      await run(pipeline("p", deliverNothing), held, request);
    });
  });

  // A conversation's ended run: a message that lands in its alarm's awaits, or while its last activation mails its answer.
  describe.each<[IoPoint, Held]>([
    ["alarm.index-flush", { point: "alarm.index-flush", passes: [2], after: false }],
    ["alarm.answer-mail", { point: "alarm.answer-mail", passes: [2], after: false }],
    ["settle.answer-mail", { point: "settle.answer-mail", passes: [1], after: false }],
    ["retention.retire", { point: "retention.retire", passes: [1], after: true }],
  ])("a conversation held at %s", (_point, held) => {
    it.each<Request>(["message", "cancel", "second-alarm", "sweep"])("lands %s there: the invariants hold", async (request) => {
      await run(conversation("c"), held, request);
    });
  });

  // A conversation's run at work: a message that lands while it runs waits its turn, and is answered after the answer in progress.
  describe.each<[IoPoint, Held]>([
    ["alarm.outbox", { point: "alarm.outbox", passes: [1], after: false }],
    ["activation.step", { point: "activation.step", passes: [1], after: false }],
    ["model.request", { point: "model.request", passes: [1], after: true }],
    ["activation.outcome", { point: "activation.outcome", passes: [1], after: false }],
    ["settle.outbox", { point: "settle.outbox", passes: [1], after: false }],
  ])("a working conversation held at %s", (_point, held) => {
    it.each<Request>(["message", "cancel"])("lands %s there: the invariants hold", async (request) => {
      await run(conversation("w"), held, request);
    });
  });
});
