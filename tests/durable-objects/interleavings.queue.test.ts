import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CLAIM_TIMEOUT_MS, dispatchTiming, type DispatchMessage } from "../../durable-objects/model-dispatch";
import { interleave, pipeline, REQUESTS, type Request } from "./harness";
import { QUEUE_POINTS, type Held } from "./harness-points";
import { consume, holdDispatches } from "./queue-dispatch";

/**
 * The interleaving harness in MODEL_DISPATCH=queue (harness.ts): the io points only this
 * mode passes — a model request's attachments and hand-off, a consumer's claim — each
 * with every external request landed there; a delivered model answer is the queue
 * consumer serving the hand-offs while the object is held.
 */

let held: DispatchMessage[] = [];
beforeEach(() => {
  held = holdDispatches();
  // No hand-off lapses while the harness drives the run (the real scheduler would race it).
  dispatchTiming.claimTimeoutMs = 10 * 60_000;
});
afterEach(() => {
  dispatchTiming.claimTimeoutMs = CLAIM_TIMEOUT_MS;
  vi.restoreAllMocks();
});

const serve = async () => void (held.length && (await consume(held.splice(0))));
let interleavings = 0;
let violated = 0;
afterAll(() => console.log(`interleaving harness (queue): ${interleavings} interleavings, ${violated} invariant violations`));

describe("the interleaving harness, MODEL_DISPATCH=queue", () => {
  describe.each(QUEUE_POINTS.map((h) => [h.point, h] as const))("held at %s", (_point, { point, passes, after }: Held) => {
    it.each(REQUESTS)("lands %s there: the invariants hold", async (request: Request) => {
      const violations: string[] = [];
      for (const when of after ? (["before", "after"] as const) : (["before"] as const)) {
        for (const occurrence of passes) {
          const r = await interleave(pipeline("q", serve, serve), { point, when }, request, occurrence);
          expect(r.landed, `${point} (${when}, pass ${occurrence}) is reached`).toBe(1);
          interleavings++;
          violated += r.violations.length;
          violations.push(...r.violations);
        }
      }
      expect(violations).toEqual([]);
    });
  });
});
