import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/engine/ids";
import { modelRequests, script, settle } from "../durable-objects/helpers";

const start = (body: unknown, key?: string) =>
  exports.default.fetch(
    new Request("https://edgework.test/runs", {
      method: "POST",
      headers: { Authorization: "Bearer test-token", "content-type": "application/json", ...(key === undefined ? {} : { "Idempotency-Key": key }) },
      body: JSON.stringify(body),
    }),
  );
const started = async (res: Response) => ({ status: res.status, replayed: res.headers.get("Idempotent-Replayed"), ...((await res.json()) as { id: string }) });
const ledger = async (key: string) => env.DELIVERIES.getByName(`idempotency-key:${await sha256Hex(key)}`);
const body = (input: string) => ({ worker: "pause-writer", input, approval_mode: "approve_all" });

describe("POST /runs with an Idempotency-Key", () => {
  it("the same key and body again: 200 with the same run, replayed; one run made", async () => {
    await script("pause-writer", [{ text: "once" }]);
    const first = await started(await start(body("a"), "key-same-1"));
    expect(first).toMatchObject({ status: 202, replayed: null });
    expect(await settle(first.id)).toMatchObject({ status: "succeeded", output: "once" });
    const again = await started(await start(body("a"), "key-same-1"));
    expect(again).toEqual({ ...first, status: 200, replayed: "true" });
    // The defaults applied are the same request: approval_mode said or not.
    expect((await started(await start({ worker: "pause-writer", input: "b" }, "key-same-2"))).status).toBe(202);
    expect((await started(await start({ worker: "pause-writer", input: "b", approval_mode: "ask" }, "key-same-2"))).status).toBe(200);
    expect(await modelRequests("pause-writer")).toHaveLength(1);
  });

  it("two identical requests at once start one run: both answers name it, one 202 and one 200", async () => {
    await script("pause-writer", [{ text: "raced" }, { text: "a second run" }]);
    const answers = await Promise.all([1, 2, 3].map(() => start(body("race"), "key-race").then(started)));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 202]);
    expect(await settle(answers[0]!.id)).toMatchObject({ status: "succeeded", output: "raced" });
    expect(await modelRequests("pause-writer")).toHaveLength(1);
  });

  it("the same key with another body: 422, no run; the first body still names its run", async () => {
    await script("pause-writer", [{ text: "first" }]);
    const first = await started(await start(body("one"), "key-other"));
    const other = await start(body("two"), "key-other");
    expect(other.status).toBe(422);
    expect(((await other.json()) as { error: string }).error).toContain("Idempotency-Key was used within 24 hours with another request body");
    expect((await started(await start(body("one"), "key-other"))).id).toBe(first.id);
  });

  it("a key past its 24 hours starts a new run, and its ledger deletes itself", async () => {
    await script("pause-writer", [{ text: "old" }, { text: "new" }]);
    const first = await started(await start(body("x"), "key-lapse"));
    await settle(first.id);
    await runInDurableObject(await ledger("key-lapse"), (_o, state) => {
      const held = state.storage.kv.get<{ until: number }>("start")!;
      expect(held.until - Date.now()).toBeGreaterThan(23.9 * 3600_000);
      state.storage.kv.put("start", { ...held, until: Date.now() - 1 });
    });
    const next = await started(await start(body("x"), "key-lapse"));
    expect(next).toMatchObject({ status: 202 });
    expect(next.id).not.toBe(first.id);
    await runInDurableObject(await ledger("key-lapse"), (_o, state) =>
      state.storage.kv.put("start", { ...state.storage.kv.get<object>("start"), until: Date.now() - 1 }),
    );
    expect(await runDurableObjectAlarm(await ledger("key-lapse"))).toBe(true);
    expect(await runInDurableObject(await ledger("key-lapse"), (_o, state) => [...state.storage.kv.list()])).toEqual([]);
  });

  it("a key that is empty, too long or not visible ASCII is refused (400 naming the header) before anything is bound", async () => {
    for (const key of ["", "k".repeat(256), "two words", "tab\there", "cl\u00e9"]) {
      const res = await start(body("bad"), key);
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain("Idempotency-Key must be 1 to 255 visible ASCII characters");
    }
    await script("pause-writer", [{ text: "long key" }]);
    expect((await started(await start(body("ok"), "k".repeat(255)))).status).toBe(202);
  });

  it("a refused start (unknown worker) binds no key: the key then starts the right request", async () => {
    const refused = await start({ worker: "no-such-worker", input: "x" }, "key-refused");
    expect(refused.status).toBe(404);
    await script("pause-writer", [{ text: "right" }]);
    expect((await started(await start(body("right"), "key-refused"))).status).toBe(202);
  });
});
