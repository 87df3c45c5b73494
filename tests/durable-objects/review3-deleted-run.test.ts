import { runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { age } from "./harness";
import { script, settle, stub } from "./helpers";
import { alarmOf, object } from "./interleave";

/**
 * Review 3: a run retention just deleted, asked again by the object instance that deleted it
 * (an object stays in memory a while after its alarm). `deleteAll` took the run's tables with
 * it; RunDO's `deleted` flag makes `row()` answer "no run", but not every request reads the run
 * through `row()` first.
 */

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };

async function deletedRun(id: string): Promise<void> {
  await script("chat-writer", [{ text: "a1" }]);
  await stub(id).start({ id, worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
  expect(await settle(id)).toMatchObject({ status: "succeeded" });
  await age(id, 31);
  await runDurableObjectAlarm(object(id)); // retention: the index is told, every row deleted
  expect(await alarmOf(id)).toBeNull();
  const read = await exports.default.fetch(new Request(`https://edgework.test/runs/${id}`, { headers: auth }));
  expect(read.status).toBe(404); // the run reads as deleted
}

describe("a request to a run retention just deleted, in the same instance", () => {
  it("POST /runs/:id/events/:name answers 404 (deleted), not a 5xx a webhook sender retries", async () => {
    const id = "r3-deleted-event";
    await deletedRun(id);
    const res = await exports.default.fetch(
      new Request(`https://edgework.test/runs/${id}/events/go`, { method: "POST", headers: auth, body: JSON.stringify({ payload: 1, id: "ev-1" }) }),
    );
    const body = await res.text();
    expect(res.status, body).toBe(404);
  });

  it("an emailed approval reply to it answers 404, not a thrown 'no such table'", async () => {
    const id = "r3-deleted-reply";
    await deletedRun(id);
    const answer = await stub(id)
      .decideByReply("0".repeat(64), { by: "email", decider: { email: "approver@example.com", via: "email" }, replyFrom: "approver@example.com" } as never)
      .catch((err: unknown) => ({ thrown: String(err) }));
    expect(answer).toMatchObject({ ok: false, status: 404 });
  });
});
