import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../src/triggers/flow/config";
import { testFlowKey } from "../support/test-flow-key";

/**
 * A debounced key's batch joins its line as one delivery. When the line does not move (over the
 * rate with `over: queue`, or busy with `on_busy: queue`), every debounced delivery must still be
 * bounded by the line's bounds, as a queued one is: otherwise a sender grows one object's storage
 * (and the rows every later delivery reads) without end.
 */
describe("a debounced key's line is bounded", () => {
  it(`debounce with rate over: queue — once the line holds ${MAX_LINE_BYTES} bytes, a delivery is refused (429), not kept`, async () => {
    const trigger = "flow-debounce-throttle";
    const key = ["octo/flow", 501];
    const object = await testFlowKey(env, trigger, key);
    const title = "x".repeat(700_000);
    const answers: Array<Record<string, unknown>> = [];
    // Each delivery overflows the batch's input bound, so the one before it joins the line; the rate lets one run through a day.
    for (let seq = 1; seq <= 16; seq++) {
      answers.push(
        (await object.deliver({ trigger, key, id: `review4-${seq}`, input: { title, seq }, record: { kind: "webhook", name: trigger } })) as Record<
          string,
          unknown
        >,
      );
    }
    const refused = answers.filter((a) => a.refused === true);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ status: 429, error: expect.stringContaining("line is full") });
    const bytes = await object.lineBytes();
    expect(bytes).toBeLessThanOrEqual(MAX_LINE_BYTES);
  });
});
