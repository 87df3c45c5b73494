import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openaiModel } from "../../src/engine/model/openai";
import { ConnectionSlots, ConnectionWaitError, connectedFetch, whenConnected, withHeld, type Connection } from "../../src/engine/net/connection-slots";
import { mcpFetch } from "../../src/engine/toolsets/kinds/mcp";
import { fakeOpenAI } from "./helpers";

afterEach(() => vi.restoreAllMocks());

/** Lets every pending promise callback run. */
const settled = () => new Promise((r) => setTimeout(r, 0));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("ConnectionSlots", () => {
  it("gives connections first come, first served: a released one goes to the longest waiting, never to one that came later", async () => {
    const slots = new ConnectionSlots(2);
    const granted: string[] = [];
    const take = (name: string) => slots.acquire().then((c) => (granted.push(name), c));
    const a = await take("a");
    await take("b");
    const c = take("c");
    const d = take("d");
    await settled();
    expect(granted).toEqual(["a", "b"]);
    a.release();
    a.release(); // twice is once
    await settled();
    expect(granted).toEqual(["a", "b", "c"]);
    const e = take("e");
    (await c).release();
    (await d).release();
    await e;
    expect(granted).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("a wait its signal aborts rejects with the signal's reason and leaves the line", async () => {
    const slots = new ConnectionSlots(1);
    const held = await slots.acquire();
    const stop = new AbortController();
    const gaveUp = slots.acquire(stop.signal);
    const next = slots.acquire();
    stop.abort(new Error("not any more"));
    await expect(gaveUp).rejects.toThrow("not any more");
    held.release();
    await expect(next).resolves.toBeDefined();
    await expect(slots.acquire(AbortSignal.abort(new Error("aborted before")))).rejects.toThrow("aborted before");
  });

  it("a wait past its bound fails with an error naming the limit and what to change", async () => {
    const slots = new ConnectionSlots(6, 30);
    for (let i = 0; i < 6; i++) await slots.acquire();
    const err = await slots.acquire().catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionWaitError);
    expect(err.message).toMatch(
      /no connection free within 0 s: 6 requests were waiting for their response headers \(Cloudflare allows 6 at once per invocation\)/,
    );
    expect(err.message).toMatch(/make fewer requests in parallel/);
  });

  it("connectedFetch holds a connection until the response's headers arrive, not until its body is read, and gives it back when the request fails", async () => {
    const slots = new ConnectionSlots(1);
    const endless = new ReadableStream({ pull: () => new Promise(() => {}) });
    const headed = await connectedFetch(slots, undefined, async () => new Response(endless))("https://example.com/a");
    expect(headed.status).toBe(200);
    (await slots.acquire()).release(); // free although the body is never read
    await expect(connectedFetch(slots, undefined, () => Promise.reject(new Error("refused")))("https://example.com/b")).rejects.toThrow("refused");
    (await slots.acquire()).release();
  });

  it("withHeld lends a connection taken earlier to the next acquire, ahead of those waiting; whenConnected gives back one its request never used", async () => {
    const slots = new ConnectionSlots(1);
    const held = await slots.acquire();
    const waiting = slots.acquire();
    const lent = withHeld(slots, held);
    expect(await lent.acquire()).toBe(held);
    held.release();
    const other = await waiting;
    other.release();
    await expect(whenConnected(slots, async () => Promise.reject(new Error("refused before sending")))).rejects.toThrow("refused before sending");
    (await slots.acquire()).release();
  });
});

describe("requests that take their turn", () => {
  it("a model request's timeout counts from when it has a connection: one that waited five times its timeout_ms in line is answered", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `line-${crypto.randomUUID()}`, [{ text: "worth the wait" }]);
    const slots = new ConnectionSlots(1);
    const busy = await slots.acquire();
    const model = openaiModel("m", { baseURL: fake.baseURL, apiKey: "sk-test", timeoutMs: 100, connections: slots });
    const answer = model.request({ messages: [{ role: "user", content: "hi" }], tools: [] });
    await sleep(500);
    expect(await fake.requests()).toHaveLength(0); // still in line
    busy.release();
    expect(await answer).toMatchObject({ text: "worth the wait" });
    expect(await fake.requests()).toHaveLength(1);
  });

  it("an MCP transport's requests take their turn for a connection", async () => {
    const sent = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("{}"));
    const slots = new ConnectionSlots(1);
    const busy: Connection = await slots.acquire();
    const answer = mcpFetch("https://mcp.example.com/mcp", {}, slots)("https://mcp.example.com/mcp", { method: "POST", body: "{}" });
    await settled();
    expect(sent).not.toHaveBeenCalled();
    busy.release();
    expect((await answer).status).toBe(200);
    expect(sent).toHaveBeenCalledTimes(1);
  });
});
