import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { script, settle } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));

/** Every form the secret could show up in: raw, JSON-escaped, URL-encoded, and HTML-escaped (the run page). */
const SECRET = (env as unknown as Record<string, string>).GITHUB_WEBHOOK_SECRET!;
const forms = [SECRET, JSON.stringify(SECRET).slice(1, -1), encodeURIComponent(SECRET), SECRET.replaceAll("'", "&#39;"), SECRET.replaceAll("'", "&#x27;")];

afterEach(() => vi.restoreAllMocks());

describe("secrets echoed by an upstream", () => {
  it("never reach the journal, GET /runs/:id, the SSE events or the run page", async () => {
    expect(SECRET.length).toBeGreaterThanOrEqual(8);
    const upstream = globalThis.fetch;
    // An allowed upstream that echoes what it was sent, as a debugging endpoint or a careless error page does.
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (new URL(req.url).hostname !== "echo.example") return upstream(input, init);
      const authorization = req.headers.get("authorization");
      return new Response(JSON.stringify({ you_sent: { authorization }, retry: `https://echo.example/?auth=${encodeURIComponent(authorization ?? "")}` }), {
        status: 401,
        headers: { "content-type": "application/json" },
      });
    });
    await script("echo-upstream", [{ tool_calls: [{ name: "up_fetch", arguments: { url: "https://echo.example/whoami" } }] }, { text: "checked" }]);
    const start = await call("/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "echo-upstream", input: "who am I" }),
    });
    const { id } = (await start.json()) as { id: string };
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "checked" });

    const stored = await runInDurableObject(env.RUNS.getByName(id), (_i, state) =>
      ["journal", "events", "approvals", "run"].map((t) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${t}`).toArray())).join("\n"),
    );
    const status = await (await call(`/runs/${id}`, { headers: auth })).text();
    const events = await (await call(`/runs/${id}/events`, { headers: auth })).text();
    const page = await (await call(`/runs/${id}/view`, { headers: auth })).text();
    // The upstream did get the header, and what came back is there, redacted.
    expect(stored).toContain("[redacted:GITHUB_WEBHOOK_SECRET]");
    expect(status).toContain("[redacted:GITHUB_WEBHOOK_SECRET]");
    for (const [where, text] of Object.entries({ stored, status, events, page })) {
      for (const f of forms) expect(text, `${where} shows ${f}`).not.toContain(f);
    }
  });

  it("leave a wrangler.toml [vars] value readable in GET /runs/:id and the run page, beside a redacted secret", async () => {
    // DEFAULT_MODEL is in wrangler.toml's [vars]; GITHUB_WEBHOOK_SECRET is a binding of the test pool only (a secret).
    expect((env as unknown as Record<string, string>).DEFAULT_MODEL).toBe("test:tools");
    const upstream = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (new URL(req.url).hostname !== "echo.example") return upstream(input, init);
      return Response.json({ model_sent: `model=${req.headers.get("x-default-model")}`, auth_sent: req.headers.get("authorization") });
    });
    await script("vars-upstream", [{ tool_calls: [{ name: "up_fetch", arguments: { url: "https://echo.example/whoami" } }] }, { text: "checked" }]);
    const start = await call("/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "vars-upstream", input: "who am I" }),
    });
    const { id } = (await start.json()) as { id: string };
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "checked" });
    const status = await (await call(`/runs/${id}`, { headers: auth })).text();
    const page = await (await call(`/runs/${id}/view`, { headers: auth })).text();
    for (const [where, text] of Object.entries({ status, page })) {
      expect(text, where).toContain("model=test:tools");
      expect(text, where).not.toContain("[redacted:DEFAULT_MODEL]");
      expect(text, where).toContain("[redacted:GITHUB_WEBHOOK_SECRET]");
      for (const f of forms) expect(text, `${where} shows ${f}`).not.toContain(f);
    }
  });
});
