import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { interleaveAll, pipeline, REQUESTS, traceOf, type Landing } from "./harness";
import { DIRECT_POINTS } from "./harness-points";
import { random } from "../support/seeded-random";

/**
 * The harness's seeded variant (harness.ts): runs with several requests each, landed at
 * points, passes and moments drawn from one seed. The seed is printed; a failure names it,
 * and `HARNESS_SEED=<seed> npx vitest run --project workers tests/durable-objects/interleavings.random.test.ts`
 * runs the same interleavings again.
 */

const SEED = Number(env.HARNESS_SEED) || Date.now() % 2 ** 31;
const RUNS = 16;

describe("the interleaving harness, seeded", () => {
  it(`${RUNS} runs, each with a request landed in some of its drive steps, drawn from a seed (printed): the invariants hold`, async () => {
    console.log(`interleaving harness (seeded): HARNESS_SEED=${SEED}`);
    const next = random(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    // Where a run left alone passes which points: a landing is drawn from a drive step and a point it passes.
    const drives = await traceOf(
      pipeline("s", async () => null),
      `il-seed-${SEED}-trace`,
    );
    const violations: string[] = [];
    let landed = 0;
    let asked = 0;
    for (let r = 0; r < RUNS; r++) {
      const landings: Landing[] = [];
      let previous = -1;
      for (const [d, points] of drives.entries()) {
        if (next() < 0.4) continue;
        const point = pick(points);
        const after = DIRECT_POINTS.find((h) => h.point === point)?.after && next() < 0.5;
        // Counted from the drive step after the landing before: the steps up to this one that pass the point.
        const occurrence = drives.slice(previous + 1, d + 1).filter((ps) => ps.includes(point)).length;
        landings.push({ hold: { point, when: after ? "after" : "before" }, request: pick(REQUESTS), occurrence });
        previous = d;
      }
      asked += landings.length;
      const result = await interleaveAll(
        pipeline("s", async () => null),
        `il-seed-${SEED}-${r}`,
        landings,
      );
      landed += result.landed;
      violations.push(...result.violations.map((v) => `${v} (landings: ${landings.map((l) => `${l.request}@${l.hold.point}`).join(", ")})`));
    }
    console.log(`interleaving harness (seeded): ${RUNS} runs, ${landed} of ${asked} requests landed, ${violations.length} invariant violations`);
    expect(violations, `HARNESS_SEED=${SEED}`).toEqual([]);
  }, 120_000);
});
