import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BadRequestError, ConnectionError, EdgeworkClient, type Fetch, GoneError, InternalServerError, RateLimitError, TimeoutError } from "../../src/client";
import { effectUrl, modelRequests, script, settle } from "../durable-objects/helpers";
import { appClient } from "./app-client";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const RUN = { id: "r1", status: "running" };

/** A client whose fetch answers from a script, one response (or thrown error) per call; `calls` records what was sent. */
function scripted(answers: Array<Response | Error | "hang">, opts: { maxRetries?: number; timeoutMs?: number } = {}) {
  const calls: Array<{ url: string; method: string; headers: Headers; signal: AbortSignal | null | undefined; at: number }> = [];
  const fetch: Fetch = async (url, init) => {
    calls.push({ url, method: init.method ?? "GET", headers: new Headers(init.headers), signal: init.signal, at: Date.now() });
    const next = answers.shift() ?? json(500, { error: "script ran out" });
    if (next === "hang") return new Promise<Response>(() => {}); // ignores its signal too
    if (next instanceof Error) throw next;
    return next;
  };
  return { client: new EdgeworkClient({ baseURL: "https://edgework.test/agents/", apiToken: "t", fetch, ...opts }), calls };
}

describe("retries", () => {
  it("a read is retried after 503s (Retry-After honoured) and network errors, then succeeds", async () => {
    const { client, calls } = scripted([json(503, { error: "busy" }, { "retry-after": "0" }), new TypeError("fetch failed"), json(200, RUN)]);
    expect(await client.runs.get("r1")).toEqual(RUN);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(Array(3).fill("GET https://edgework.test/agents/runs/r1"));
  });

  it("Retry-After of 1 s is waited for; one longer than a minute is not retried", async () => {
    const slow = scripted([json(429, { error: "slow down" }, { "retry-after": "1" }), json(200, RUN)]);
    expect(await slow.client.runs.get("r1")).toEqual(RUN);
    expect(slow.calls[1]!.at - slow.calls[0]!.at).toBeGreaterThanOrEqual(950);

    const later = scripted([json(429, { error: "come back tomorrow" }, { "retry-after": "86400" })]);
    const err = await later.client.runs.get("r1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).headers?.get("retry-after")).toBe("86400");
    expect(later.calls).toHaveLength(1);
  });

  it("gives up after maxRetries with the last error, its cause kept", async () => {
    const down = scripted([new TypeError("a"), new TypeError("b"), new TypeError("c")], { maxRetries: 2 });
    const err = await down.client.workers.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).cause).toMatchObject({ message: "c" });
    expect(down.calls).toHaveLength(3);

    const failing = scripted([json(500, { error: "internal error" }), json(500, { error: "internal error" })], { maxRetries: 1 });
    await expect(failing.client.approvals.list()).rejects.toBeInstanceOf(InternalServerError);
    expect(failing.calls).toHaveLength(2);
  });

  it("sendMessage is sent once: a 503 or a lost response is not retried (a repeat could be a second message), unless asked", async () => {
    for (const failure of [json(503, { error: "busy" }, { "retry-after": "0" }), new TypeError("fetch failed")]) {
      const { client, calls } = scripted([failure, json(202, { id: "r1", status: "running", message: 2 })]);
      await expect(client.runs.sendMessage("r1", "hi")).rejects.toBeDefined();
      expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(["POST https://edgework.test/agents/runs/r1/messages"]);
    }
    const asked = scripted([json(503, { error: "busy" }, { "retry-after": "0" }), json(202, { id: "r1", status: "running", message: 2 })]);
    expect(await asked.client.runs.sendMessage("r1", "hi", { maxRetries: 1 })).toEqual({ id: "r1", status: "running", message: 2 });
    expect(asked.calls).toHaveLength(2);
  });

  it("sendMessage with a message id is retried like a read: a repeat is the same message", async () => {
    const { client, calls } = scripted([new TypeError("fetch failed"), json(202, { id: "r1", status: "succeeded", message: 2, duplicate: true })]);
    expect(await client.runs.sendMessage("r1", "hi", { id: "msg-1" })).toEqual({ id: "r1", status: "succeeded", message: 2, duplicate: true });
    expect(calls).toHaveLength(2);
  });

  it("a 400, a 410 or another 4xx is never retried", async () => {
    for (const [status, cls] of [
      [400, BadRequestError],
      [410, GoneError],
    ] as const) {
      const { client, calls } = scripted([json(status, { error: "no" }), json(200, RUN)]);
      await expect(client.approvals.decide("r1", "ap_1", { decision: "approve" })).rejects.toBeInstanceOf(cls);
      expect(calls).toHaveLength(1);
    }
  });

  it("starting a run sends one Idempotency-Key on every attempt, so it is retried after a 503 or a lost response like a read", async () => {
    for (const answer of [json(503, { error: "busy" }, { "retry-after": "0" }), new TypeError("connection reset"), json(502, "bad gateway")]) {
      const { client, calls } = scripted([answer, json(200, { id: "r1", status_url: "x" })]);
      expect(await client.runs.start({ worker: "w", input: "x" })).toEqual({ id: "r1", status_url: "x" });
      const keys = calls.map((c) => c.headers.get("idempotency-key"));
      expect(keys).toHaveLength(2);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
    }
  });

  it("a start whose response is lost after the app started the run is retried and gets that run, not a second one", async () => {
    await script("pause-writer", [{ text: "started once" }, { text: "a second run" }]);
    let attempts = 0;
    const losing = new EdgeworkClient({
      baseURL: "https://edgework.test",
      apiToken: "test-token",
      fetch: async (url, init) => {
        const res = await exports.default.fetch(new Request(url, init));
        if (new URL(url).pathname === "/runs" && attempts++ === 0) throw new TypeError("connection reset after the request was sent");
        return res;
      },
    });
    const { id } = await losing.runs.start({ worker: "pause-writer", input: "go", approvalMode: "approve_all", idempotencyKey: "job-42" });
    expect(attempts).toBe(2);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "started once" });
    expect(await modelRequests("pause-writer")).toHaveLength(1);
  });
});

describe("timeouts and signals", () => {
  it("a fetch that never answers (ignoring its signal) → TimeoutError per attempt, retried, then thrown", async () => {
    const { client, calls } = scripted(["hang", "hang"], { timeoutMs: 50, maxRetries: 1 });
    const err = await client.runs.get("r1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toBe("GET /runs/r1 got no answer within 50 ms");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.signal?.aborted).toBe(true);
  });

  it("the caller's AbortSignal stops a request and its retries with the caller's reason", async () => {
    const { client, calls } = scripted(["hang", "hang"]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user gave up")), 30);
    await expect(client.runs.get("r1", { signal: controller.signal })).rejects.toThrow("user gave up");
    expect(calls).toHaveLength(1);
    await expect(client.runs.get("r1", { signal: AbortSignal.abort(new Error("before")) })).rejects.toThrow("before");
  });

  it("wait: timeoutMs → TimeoutError naming the status; a signal stops it; a terminal status ends it whatever `until` says", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("client-wait"), method: "POST" } }] }, { text: "done" }]);
    const client = appClient();
    const { id } = await client.runs.start({ worker: "pause-writer", input: "post" });
    await settle(id);
    const started = Date.now();
    const err = await client.runs.wait(id, { until: ["succeeded"], timeoutMs: 600 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe(`run "${id}" is still awaiting_approval after 600 ms; waited for succeeded`);
    expect(Date.now() - started).toBeLessThan(3_000);

    await expect(client.runs.wait(id, { until: ["succeeded"], signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: "TimeoutError" });
    expect((await client.runs.wait(id)).status).toBe("awaiting_approval"); // the default includes paused

    await client.runs.cancel(id);
    expect((await client.runs.wait(id, { until: ["succeeded"] })).status).toBe("cancelled");
  });
});
