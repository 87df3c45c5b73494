import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { testClient } from "../../src/testing";
import { effectUrl, settle, stub } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };
const get = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
const client = testClient(exports.default, { apiToken: "test-token" });

async function paused(id: string, worker: string, input: unknown) {
  await stub(id).start({ id, worker, input, approvalMode: "ask", budget: {} });
  expect((await settle(id)).status).toBe("waiting");
}

describe("a waiting run is `waiting`, with what it waits for, everywhere it is shown", () => {
  it("the API, the index filter, the inbox, the run page and edgework/client", async () => {
    await paused("surf-sleep", "fn-sleeper", { url: effectUrl("surf-sleep") });
    await paused("surf-event", "fn-waiter", { event: "go", key: "sha-9" });

    const run = await client.runs.get("surf-event");
    expect(run).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "go", key: "sha-9", expires_at: expect.any(Number) }] });
    expect(run.waits[0]!.until).toBeUndefined();
    const sleeping = await client.runs.get("surf-sleep");
    expect(sleeping.waits).toEqual([expect.objectContaining({ kind: "sleep", until: sleeping.waits[0]!.expires_at, reason: "let the deploy settle" })]);

    // The index lists both under status=waiting (reports land after the run's transaction).
    await expect
      .poll(async () => ((await (await get("/runs?status=waiting")).json()) as { runs: Array<{ id: string }> }).runs.map((r) => r.id).sort())
      .toEqual(expect.arrayContaining(["surf-event", "surf-sleep"]));
    const awaiting = (await (await get("/runs?status=awaiting_approval")).json()) as { runs: Array<{ id: string }> };
    expect(awaiting.runs.map((r) => r.id)).not.toContain("surf-event");

    const inbox = await (await get("/inbox")).text();
    expect(inbox).toContain("Waiting for a timer, an event or an answer");
    expect(inbox).toContain("event go (key sha-9)");
    expect(inbox).toContain("a timer");

    const page = await (await get("/runs/surf-sleep/view")).text();
    expect(page).toContain('class="badge waiting"');
    expect(page).toContain("Waiting for");
    expect(page).toContain("let the deploy settle");

    // edgework/client delivers the event; the same id again is a duplicate.
    expect(await client.runs.sendEvent("surf-event", "go", { payload: { ok: true }, id: "c-1", key: "sha-9" })).toEqual({
      id: "c-1",
      applied: true,
      buffered: false,
      duplicate: false,
    });
    expect(await client.runs.sendEvent("surf-event", "go", { payload: { ok: true }, id: "c-1" })).toMatchObject({ duplicate: true });
    expect(await settle("surf-event")).toMatchObject({ status: "succeeded", waits: [], output: { status: "received", payload: { ok: true } } });
  });

  it("an event with the wrong correlation key is kept, not taken by a wait under another key", async () => {
    await paused("surf-keyed", "fn-waiter", { event: "go", key: "right" });
    expect(await client.runs.sendEvent("surf-keyed", "go", { payload: 1, key: "wrong" })).toMatchObject({ applied: false, buffered: true });
    expect(await client.runs.sendEvent("surf-keyed", "go", { payload: 2 })).toMatchObject({ applied: false, buffered: true });
    expect((await client.runs.get("surf-keyed")).status).toBe("waiting");
  });
});
