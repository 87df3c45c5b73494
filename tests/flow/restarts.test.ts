import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { flowObjectName } from "../../src/triggers/flow/key";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { deliver, issueBody, keyOf, runOf } from "./support";

const keyAlarm = async (trigger: string, issue: number) => runDurableObjectAlarm(env.FLOW_KEYS.getByName(await flowObjectName(trigger, ["octo/flow", issue])));

/** The user messages of a run's conversation after its input, as the seq each carried. */
const seqs = (messages: Array<{ role: string; text: string }>) =>
  messages
    .filter((m) => m.role === "user")
    .slice(1)
    .map((m) => (JSON.parse(m.text) as { seq: number }).seq);

describe("exactly once per delivery, across failures, evictions and concurrent redeliveries", () => {
  for (const mode of ["throw", "abort"] as const) {
    it(`an act cut off after its decision (${mode}) is finished by the key's alarm, once; the redelivery answers the same`, async () => {
      const issue = mode === "throw" ? 501 : 502;
      const key = await keyOf("flow-queue", issue);
      const body = issueBody(issue, 1);
      const run = await runOf("flow-queue", body);
      await key.failNextActs(1, mode);
      const first = await deliver("flow-queue", body).catch((err: Error) => ({ status: 500, body: { error: err.message } }));
      // The delivery is kept: its answer is that it waits (or, evicted, a 5xx the sender retries).
      if (mode === "throw") expect(first.body).toEqual({ queued: true, position: 1 });
      else expect(first.status).toBeGreaterThanOrEqual(500);
      expect(await stub(run).status()).toBeNull();
      // An evicted object's old stub stays broken: a new one reaches the new instance.
      const again = await keyOf("flow-queue", issue);
      await again.advanceClock(60_000);
      await keyAlarm("flow-queue", issue);
      expect((await stub(run).status())?.status).toBe("queued");
      expect((await deliver("flow-queue", body)).body).toMatchObject({ run_id: run, started: true, duplicate: true });
      expect((await again.tables()).slots).toEqual([run]);
    });
  }

  it("50 deliveries for one issue at once, each sent twice at once: one run, 49 messages, none lost or duplicated", { timeout: 120_000 }, async () => {
    const issue = 503;
    await script(
      "flow-chat",
      Array.from({ length: 50 }, (_, i) => ({ text: `answer ${i + 1}` })),
    );
    const first = issueBody(issue, 1);
    const run = await runOf("flow-message", first);
    expect((await deliver("flow-message", first)).body).toMatchObject({ run_id: run, started: true });
    const bodies = Array.from({ length: 49 }, (_, i) => issueBody(issue, i + 2));
    const answers = await Promise.all(bodies.flatMap((b) => [deliver("flow-message", b, null), deliver("flow-message", b, null)]));
    for (const a of answers) expect(a.body).toMatchObject({ run_id: run, messaged: true });
    expect(answers.filter((a) => a.body.duplicate)).toHaveLength(49);
    const view = await settle(run, { maxActivations: 80 });
    const taken = seqs(view.messages);
    expect([...taken].sort((a, b) => a - b)).toEqual(Array.from({ length: 49 }, (_, i) => i + 2));
    expect(view.messages.filter((m) => m.role === "assistant")).toHaveLength(50);
    expect(await modelRequests("flow-chat")).toHaveLength(50);
  });
});
