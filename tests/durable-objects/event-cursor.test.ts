import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { app } from "../../src/http/app";
import type { RunEvent } from "../../src/runs/types";
import { effectUrl, script, settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token" };

/** A run with steps of several events (call + turn; a decision + approval_recorded) and events between steps: two approvals, decided apart. */
async function eventfulRun(id: string): Promise<RunEvent[]> {
  const post = (n: number) => ({ id: `p${n}`, name: "fx_fetch", arguments: { url: effectUrl(`${id}-${n}`), method: "POST" } });
  await script("pause-writer", [{ tool_calls: [post(1), post(2)] }, { text: "both posted" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const [a, b] = (await settle(id)).approvals;
  await stub(id).decide(a!.id, { decision: "approve", by: "one" });
  await settle(id);
  await stub(id).decide(b!.id, { decision: "reject", by: "two" });
  expect(await settle(id)).toMatchObject({ status: "succeeded" });
  const { events, done } = (await stub(id).eventsSince("0-0", 1000))!;
  expect(done).toBe(true);
  return events;
}

it("every event has its own id; from any of them the rest comes exactly, in batches of any size", async () => {
  const all = await eventfulRun("cursor-exact");
  expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  expect(all.map((e) => e.type)).toEqual(expect.arrayContaining(["call", "turn", "approval_decided", "approval_recorded", "run_succeeded"]));
  for (const limit of [1, 2, 3, 7, 1000]) {
    for (let k = -1; k < all.length; k++) {
      // Page through from after event k, as an SSE response does between polls.
      const got: RunEvent[] = [];
      let cursor = k < 0 ? "0-0" : all[k]!.id;
      for (let polls = 0; polls < 200; polls++) {
        const batch = (await stub("cursor-exact").eventsSince(cursor, limit))!;
        got.push(...batch.events);
        if (batch.done) break;
        cursor = batch.events.at(-1)?.id ?? cursor;
      }
      expect(got, `limit ${limit}, after event ${k}`).toEqual(all.slice(k + 1));
    }
  }
});

it("an SSE response ends with `end` (no id) once the run ended; resuming after any id over HTTP repeats and misses nothing", async () => {
  const id = "cursor-http";
  const all = await eventfulRun(id);
  const text = await (await app.request(`/runs/${id}/events`, { headers: auth }, env)).text();
  expect(text.endsWith("event: end\ndata: {}\n\n")).toBe(true);
  const ids = [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
  expect(ids).toEqual(all.map((e) => e.id));
  for (const k of [0, all.findIndex((e) => e.type === "call"), all.findIndex((e) => e.type === "approval_decided"), all.length - 1]) {
    const rest = await (await app.request(`/runs/${id}/events`, { headers: { ...auth, "Last-Event-ID": all[k]!.id } }, env)).text();
    expect(
      [...rest.matchAll(/^id: (.+)$/gm)].map((m) => m[1]),
      `after ${all[k]!.type}`,
    ).toEqual(all.slice(k + 1).map((e) => e.id));
  }
});

it("a silent stream (a paused run) gets a heartbeat comment every SSE_HEARTBEAT_MS, and no end", async () => {
  const id = "cursor-heartbeat";
  await script("pause-writer", [{ tool_calls: [{ id: "p1", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }] }, { text: "posted" }]);
  await stub(id).start({ id, worker: "pause-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  expect((await settle(id)).status).toBe("awaiting_approval");
  const text = await (await app.request(`/runs/${id}/events`, { headers: auth }, { ...env, SSE_MAX_MS: "1300", SSE_HEARTBEAT_MS: "300" })).text();
  const beats = text.split("\n\n").filter((block) => block === ": heartbeat").length;
  expect(beats).toBeGreaterThanOrEqual(2);
  expect(beats).toBeLessThanOrEqual(5);
  expect(text).toContain("event: run_awaiting_approval");
  expect(text).not.toContain("event: end");
});
