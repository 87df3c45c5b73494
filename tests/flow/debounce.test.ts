import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { stub } from "../durable-objects/helpers";
import { flowObjectName } from "../../src/triggers/flow/key";
import { deliver, issueBody, keyOf, runOf } from "./support";

/** Runs the key's alarm (the pool arms it far ahead: the test moves the key's clock instead of sleeping). */
const keyAlarm = async (trigger: string, issue: number) => runDurableObjectAlarm(env.FLOW_KEYS.getByName(await flowObjectName(trigger, ["octo/flow", issue])));

describe("debounce", () => {
  it("debounce: 5s — 50 deliveries in a burst start one run, after the burst, with the last payload", async () => {
    const issue = 301;
    const bodies = Array.from({ length: 50 }, (_, i) => issueBody(issue, i + 1, `T${i + 1}`));
    const key = await keyOf("flow-debounce", issue);
    for (const [i, body] of bodies.entries()) {
      const res = await deliver("flow-debounce", body);
      expect(res.status).toBe(202);
      expect(res.body, `delivery ${i + 1}`).toMatchObject({ debounced: true, until: expect.any(Number) });
      // A second within the burst keeps it quiet no longer than five seconds from now.
      if (i % 10 === 9) {
        await key.advanceClock(4_000);
        await keyAlarm("flow-debounce", issue);
      }
    }
    const runs = await Promise.all(bodies.map((b) => runOf("flow-debounce", b)));
    for (const r of runs) expect(await stub(r).status()).toBeNull();
    await key.advanceClock(5_001);
    await keyAlarm("flow-debounce", issue);
    const view = (await stub(runs.at(-1)!).status())!;
    expect(view).toMatchObject({ status: "queued", input: { title: "T50", seq: 50 }, trigger: { kind: "webhook", name: "flow-debounce", deliveries: 50 } });
    for (const r of runs.slice(0, -1)) expect(await stub(r).status()).toBeNull();
    // Every delivery of the burst now answers with the run it became part of.
    expect((await deliver("flow-debounce", bodies[0]!)).body).toMatchObject({ run_id: runs.at(-1), started: true, duplicate: true });
    expect((await key.tables()).batch).toBe(0);
  });

  it("debounce: {after, batch: true} — the run gets every delivery's input in order; max_wait starts a burst that never goes quiet", async () => {
    const issue = 311;
    const bodies = Array.from({ length: 4 }, (_, i) => issueBody(issue, i + 1, `B${i + 1}`));
    const key = await keyOf("flow-batch", issue);
    for (const body of bodies) {
      expect((await deliver("flow-batch", body)).body).toMatchObject({ debounced: true });
      await key.advanceClock(4_000); // never quiet for 5 s; 16 s in all
    }
    await keyAlarm("flow-batch", issue);
    expect(await stub(await runOf("flow-batch", bodies.at(-1)!)).status()).toBeNull();
    await key.advanceClock(60_000); // past max_wait (1 m) since the first
    const more = issueBody(issue, 5, "B5");
    expect((await deliver("flow-batch", more)).body).toMatchObject({ debounced: true });
    await keyAlarm("flow-batch", issue);
    const view = (await stub(await runOf("flow-batch", more)).status())!;
    expect(view.input).toEqual({ batch: [1, 2, 3, 4, 5].map((seq) => ({ title: `B${seq}`, seq })) });
  });
});

describe("rate", () => {
  it("rate: 2/min (over: refuse) — a third delivery within the minute is refused with 429 and Retry-After; nothing recorded, so a later redelivery passes", async () => {
    const bodies = [1, 2, 3].map((seq) => issueBody(321, seq));
    expect((await deliver("flow-rate", bodies[0]!)).status).toBe(202);
    expect((await deliver("flow-rate", bodies[1]!)).status).toBe(202);
    const over = await deliver("flow-rate", bodies[2]!);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ error: expect.stringContaining("over its rate"), retry_after: expect.any(Number) });
    expect(over.body.retry_after).toBeLessThanOrEqual(30);
    // Another issue has a rate of its own.
    expect((await deliver("flow-rate", issueBody(322, 1))).status).toBe(202);
    const key = await keyOf("flow-rate", 321);
    await key.advanceClock(30_000);
    expect((await deliver("flow-rate", bodies[2]!)).body).toMatchObject({ run_id: await runOf("flow-rate", bodies[2]!), started: true });
  });

  it("rate: {limit: 2/min, over: queue} — over the rate a delivery waits in the key's line and starts when the rate allows, in order", async () => {
    const bodies = [1, 2, 3, 4].map((seq) => issueBody(331, seq));
    const runs = await Promise.all(bodies.map((b) => runOf("flow-throttle", b)));
    const answers = [];
    for (const b of bodies) answers.push((await deliver("flow-throttle", b)).body);
    expect(answers).toMatchObject([{ started: true }, { started: true }, { queued: true, position: 1 }, { queued: true, position: 2 }]);
    const key = await keyOf("flow-throttle", 331);
    await key.advanceClock(30_000);
    await keyAlarm("flow-throttle", 331);
    expect((await stub(runs[2]!).status())?.status).toBe("queued");
    expect(await stub(runs[3]!).status()).toBeNull();
    await key.advanceClock(30_000);
    await keyAlarm("flow-throttle", 331);
    expect((await stub(runs[3]!).status())?.status).toBe("queued");
    expect((await key.tables()).line).toBe(0);
  });
});
