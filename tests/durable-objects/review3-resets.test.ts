import { runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import type { IoPoint } from "../../durable-objects/run/io";
import { SOON_MS } from "../support/test-objects";
import { conversation, pipeline, type Scenario } from "./harness";
import { effectCount, stub } from "./helpers";
import { alarmOf, object } from "./interleave";

/**
 * Review 3: the interleaving harness lands requests at every io point, but never resets the
 * object there. Here the object is reset (`ctx.abort`, as an eviction or a crash does) while
 * held at each io point of a run's first pass through it, before its I/O and after it; the
 * platform then retries the alarm that was running (the test re-arms it when the test pool's
 * helper dropped it), and the run is driven to its end. Checked: it ends as it would have,
 * each effect posted once, and a queued or running run always has an alarm.
 */

const POINTS: Array<[IoPoint, "before" | "after"]> = [
  ["alarm.index-flush", "before"],
  ["alarm.answer-mail", "before"],
  ["activation.step", "before"],
  ["activation.outcome", "before"],
  ["model.request", "after"],
  ["global.call", "after"],
  ["approval.email", "after"],
  ["approval.follow-up", "after"],
  ["pause.wait-index", "before"],
  ["pause.wait-index", "after"],
  ["index.report", "after"],
  ["retention.retire", "after"],
];

const TERMINAL = ["succeeded", "failed", "cancelled"];
let resets = 0;
afterAll(() => console.log(`review3 resets: ${resets} object resets at io points`));

/** Resets the run's object (the stub that asked is broken; a new one reaches a fresh instance). */
const reset = (id: string) =>
  runInDurableObject(object(id), (_o, state) => state.abort("review3: reset at an io point")).then(
    () => "no reset",
    (err: unknown) => ((err as { durableObjectReset?: boolean }).durableObjectReset ? "reset" : String(err)),
  );

async function driveWithReset(sc: Scenario, id: string, point: IoPoint, when: "before" | "after"): Promise<string[]> {
  const problems: string[] = [];
  await sc.start(id);
  let done = false;
  for (let step = 0; step < 40; step++) {
    const view = await stub(id).status();
    if (!view) break;
    const drive = await sc.next(id, view, done ? null : point);
    if (!drive) break;
    if (done) {
      await drive().catch((err: unknown) => problems.push(`step ${step} threw: ${String(err)}`));
    } else {
      await stub(id).holdAt(point, { nth: 1, when });
      const driving = drive().then(
        () => "done",
        () => "threw",
      );
      const reached = await Promise.race([stub(id).heldAt(20_000), driving.then(() => false)]);
      if (!reached) {
        await stub(id).release();
        await driving;
      } else {
        expect(await reset(id)).toBe("reset");
        resets++;
        done = true;
        const ended = await Promise.race([driving, new Promise((r) => setTimeout(() => r("hung"), 20_000))]);
        if (ended === "hung") problems.push("the drive never ended after the reset");
        // The platform retries an alarm whose invocation failed: it stays set. The test pool's helper may have dropped it.
        const after = await stub(id).status();
        if (after && !TERMINAL.includes(after.status) && (await alarmOf(id)) === null)
          await runInDurableObject(object(id), (_o, state) => state.storage.setAlarm(Date.now() + SOON_MS));
      }
    }
    const now = await stub(id).status();
    if (now && ["queued", "running"].includes(now.status) && (await alarmOf(id)) === null) problems.push(`step ${step}: ${now.status} without an alarm`);
  }
  if (!done) problems.push(`${point} never reached`);
  return problems;
}

describe("an object reset at each io point, then the platform's retry", () => {
  it.each(POINTS)("the pipeline reset at %s (%s): it ends as it would have, each effect once", async (point, when) => {
    const id = `r3-reset-${point}-${when}`.replaceAll(".", "_");
    const sc = pipeline(`r3${when[0]}`, async () => null);
    const problems = await driveWithReset(sc, id, point, when);
    const view = await stub(id).status();
    if (view) {
      expect(view.status, JSON.stringify(view.error)).toBe("succeeded");
      // A reset while the model answered asks it again (its answer was not recorded): the next scripted answer.
      expect(view.output).toEqual(point === "model.request" ? { ...(sc.output as object), said: "said again" } : sc.output);
      expect(view.approvals.find((a) => a.kind === "approval")?.status).toBe("approved");
    }
    for (const [key, n] of Object.entries(sc.effects(id))) expect(await effectCount(key), `effect ${key}`).toBe(n);
    expect(problems).toEqual([]);
  });

  it.each<[IoPoint, "before" | "after"]>([
    ["settle.answer-mail", "before"],
    ["alarm.index-flush", "before"],
  ])("a conversation reset at %s (%s): it answers, its effect once", async (point, when) => {
    const id = `r3-reset-c-${point}-${when}`.replaceAll(".", "_");
    const sc = conversation("r3c");
    const problems = await driveWithReset(sc, id, point, when);
    const view = (await stub(id).status())!;
    expect(view.status).toBe("succeeded");
    for (const [key, n] of Object.entries(sc.effects(id))) expect(await effectCount(key), `effect ${key}`).toBe(n);
    expect(problems).toEqual([]);
  });
});
