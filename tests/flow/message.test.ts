import { describe, expect, it } from "vitest";
import { modelRequests, script, settle, stub } from "../durable-objects/helpers";
import { deliver, issueBody, keyOf, runOf } from "./support";

/** The user messages of a run's conversation after its input, as the seq each carried. */
const seqs = (messages: Array<{ role: string; text: string }>) =>
  messages
    .filter((m) => m.role === "user")
    .slice(1)
    .map((m) => (JSON.parse(m.text) as { seq: number }).seq);

describe("on_busy: message — one run per issue; later deliveries are messages to it (signal-with-start)", () => {
  it("50 deliveries for one issue: one run, 49 messages in delivery order, each answered; none lost or duplicated when each is sent twice", async () => {
    const issue = 101;
    await script(
      "flow-chat",
      Array.from({ length: 50 }, (_, i) => ({ text: `answer ${i + 1}` })),
    );
    const bodies = Array.from({ length: 50 }, (_, i) => issueBody(issue, i + 1));
    const first = await runOf("flow-message", bodies[0]!);
    for (const [i, body] of bodies.entries()) {
      for (const copy of [1, 2]) {
        const res = await deliver("flow-message", body, `gh-msg-${i}`);
        expect(res.status, `delivery ${i + 1}, copy ${copy}`).toBe(202);
        expect(res.body).toMatchObject(i === 0 ? { run_id: first, started: true } : { run_id: first, messaged: true });
        if (copy === 2) expect(res.body.duplicate).toBe(true);
      }
    }
    const view = await settle(first, { maxActivations: 80 });
    expect(view.status).toBe("succeeded");
    expect(seqs(view.messages)).toEqual(Array.from({ length: 49 }, (_, i) => i + 2));
    expect(view.messages.filter((m) => m.role === "assistant").map((m) => m.text)).toEqual(Array.from({ length: 50 }, (_, i) => `answer ${i + 1}`));
    expect(await modelRequests("flow-chat")).toHaveLength(50);
    // No second run for the issue: every other delivery's own run id is unused.
    for (const body of bodies.slice(1, 5)) expect(await stub(await runOf("flow-message", body)).status()).toBeNull();
    const key = await keyOf("flow-message", issue);
    expect((await key.storageStats()).delivered).toBe(100);
    // The run ended: its outbox told the key, whose slot is free.
    expect((await key.tables()).slots).toEqual([]);
  });
});
