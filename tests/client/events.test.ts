import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EdgeworkClient, NotFoundError, type RunEvent } from "../../src/client";
import { effectUrl, script, settle } from "../durable-objects/helpers";
import { appClient } from "./app-client";

const client = appClient();

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const ids = (events: RunEvent[]) => events.map((e) => e.id);

async function finishedRun(): Promise<string> {
  const { id } = await client.runs.start({ worker: "scoped", input: "count" });
  expect((await settle(id)).status).toBe("succeeded");
  return id;
}

describe("runs.events", () => {
  it("yields a finished run's typed events and ends at the server's end event; lastEventId after any event resumes exactly after it", async () => {
    const id = await finishedRun();
    const all = await collect(client.runs.events(id));
    expect(all[0]).toMatchObject({ type: "run_queued", data: { worker: "scoped" } });
    expect(all.at(-1)!.type).toBe("run_succeeded");
    expect(all.some((e) => e.type === "turn" && e.data.path === "scoped" && typeof e.data.text === "string")).toBe(true);

    // Every event has an id of its own, and resuming after any of them — inside a step's
    // several (call, turn) too — gets exactly the rest: no duplicate, no gap.
    expect(new Set(ids(all)).size).toBe(all.length);
    for (let k = 0; k < all.length; k++) {
      expect(await collect(client.runs.events(id, { lastEventId: all[k]!.id! })), `after event ${k} (${all[k]!.type} ${all[k]!.id})`).toEqual(all.slice(k + 1));
    }
  });

  it("a stream cut in the middle of a step's events reconnects with Last-Event-ID: nothing missed, nothing repeated", async () => {
    const id = await finishedRun();
    const all = await collect(client.runs.events(id));
    const whole = await (
      await exports.default.fetch(new Request(`https://edgework.test/runs/${id}/events`, { headers: { authorization: "Bearer test-token" } }))
    ).text();
    // Cut a few characters into the `turn` event that follows a `call` event with the same id.
    const call = whole.indexOf("event: call\n");
    const cut = whole.indexOf("\n\n", call) + 2 + 5;
    expect(call).toBeGreaterThan(0);
    // Reconnecting asks after the last event it received whole (the call), exactly.
    const resumeFrom = [...whole.slice(0, cut).matchAll(/^id: (.+)$/gm)].map((m) => m[1]!).at(-1);
    const requests: Request[] = [];
    const cutting = new EdgeworkClient({
      baseURL: "https://edgework.test",
      apiToken: "test-token",
      fetch: async (input, init) => {
        const req = new Request(input, init);
        requests.push(req.clone());
        if (requests.length > 1) return exports.default.fetch(req);
        // The first response breaks off mid-event, as a dropped connection does.
        let pulls = 0;
        const body = new ReadableStream({
          // Errors on the read after the cut part (erroring at once would discard the queued part).
          pull: (c) => (pulls++ ? c.error(new TypeError("connection reset")) : c.enqueue(new TextEncoder().encode(whole.slice(0, cut)))),
        });
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      },
    });
    expect(await collect(cutting.runs.events(id))).toEqual(all);
    expect(requests.map((r) => r.headers.get("last-event-id"))).toEqual([null, resumeFrom]);
  });

  it("follows a paused run across responses the server ends (SSE_MAX_MS) until it ends after approval", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("client-events"), method: "POST" } }] }, { text: "done" }]);
    const { id } = await client.runs.start({ worker: "pause-writer", input: "post" });
    const paused = await settle(id);
    const seen: Request[] = [];
    const short = appClient({ vars: { SSE_MAX_MS: "1200" }, seen });
    const following = collect(short.runs.events(id));
    await new Promise((r) => setTimeout(r, 2_700));
    await client.approvals.decide(id, paused.approvals[0]!.id, { decision: "approve" });
    await settle(id);
    const events = await following;
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["approval_requested", "run_awaiting_approval", "approval_recorded", "run_running", "run_succeeded"]));
    expect(types.at(-1)).toBe("run_succeeded");
    expect(new Set(events.map((e) => JSON.stringify(e))).size).toBe(events.length);
    const connections = seen.filter((r) => new URL(r.url).pathname.endsWith("/events"));
    expect(connections.length).toBeGreaterThanOrEqual(3);
    expect(connections.slice(1).every((r) => r.headers.get("last-event-id"))).toBe(true);
  });

  it("reads past heartbeats and past an ending event, reconnects after a response without `end` from its last id, and stops at `end`", async () => {
    const bodies = [
      ': heartbeat\n\nid: 4-2\nevent: run_succeeded\ndata: {}\n\n: heartbeat\n\nid: 4-3\nevent: approval_email_failed\ndata: {"approval_id":"a","kind":"request","to":"x@y.z","error":"late"}\n\n',
      ": heartbeat\n\nevent: end\ndata: {}\n\n",
    ];
    const asked: Array<string | null> = [];
    const scripted = new EdgeworkClient({
      baseURL: "https://edgework.test",
      apiToken: "t",
      fetch: async (_url, init) => {
        asked.push(new Headers(init.headers).get("last-event-id"));
        const body = bodies.shift();
        return body === undefined ? new Response("{}", { status: 500 }) : new Response(body, { headers: { "content-type": "text/event-stream" } });
      },
    });
    const got = await collect(scripted.runs.events("r1", { lastEventId: "4-1" }));
    expect(got.map((e) => [e.id, e.type])).toEqual([
      ["4-2", "run_succeeded"],
      ["4-3", "approval_email_failed"],
    ]);
    expect(asked).toEqual(["4-1", "4-3"]);
  });

  it("unknown run → NotFoundError; an endpoint that keeps failing → gives up after maxReconnects", async () => {
    await expect(collect(client.runs.events("nope"))).rejects.toBeInstanceOf(NotFoundError);
    let calls = 0;
    const failing = new EdgeworkClient({ baseURL: "https://edgework.test", apiToken: "t", fetch: async () => (calls++, new Response("{}", { status: 502 })) });
    await expect(collect(failing.runs.events("r1", { maxReconnects: 2 }))).rejects.toMatchObject({ status: 502 });
    expect(calls).toBe(3);
  });

  it("stops when its signal aborts, while waiting for events of a paused run", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("client-abort"), method: "POST" } }] }, { text: "done" }]);
    const { id } = await client.runs.start({ worker: "pause-writer", input: "post" });
    await settle(id);
    const controller = new AbortController();
    const got: string[] = [];
    const following = (async () => {
      for await (const e of client.runs.events(id, { signal: controller.signal })) got.push(e.type);
    })();
    setTimeout(() => controller.abort(new Error("enough")), 300);
    await expect(following).rejects.toThrow("enough");
    expect(got).toContain("run_awaiting_approval");
  });
});
