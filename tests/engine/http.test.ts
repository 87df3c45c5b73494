import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { MemoryJournalStore, scriptedModel, type ScriptedReply } from "../../src/engine";
import { fakeOpenAI, harness, workerFile } from "./helpers";

/** Runs one turn of tool calls through an `http` instance and returns each call's recorded outcome. */
async function callHttp(
  config: string,
  calls: NonNullable<ScriptedReply["toolCalls"]>,
  opts: { approval?: string; vars?: Record<string, string>; runId?: string } = {},
) {
  const model = scriptedModel([{ toolCalls: calls.map((c, i) => ({ ...c, id: `h${i}` })) }, { text: "done" }]);
  const h = harness(
    { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  web: { use: http, ${config} }${opts.approval ?? ""}`) },
    { models: { "test:m": model } },
  );
  h.config.vars = opts.vars;
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "w", input: { input: "x" }, ...(opts.runId ? { runId: opts.runId } : {}) }, store);
  return { out, results: calls.map((_, i) => store.entries.get(`w/turn:1/tool:${i + 1}/result`) as any) };
}

const allowAll = "\napproval:\n  web_fetch: allow";

/** The fake upstream's two origins (tests/support/fake-upstream.ts), under a fresh id per test. */
function upstream() {
  const id = crypto.randomUUID();
  const a = env.FAKE_UPSTREAM_A;
  const b = env.FAKE_UPSTREAM_B;
  return {
    a: (route: string) => `${a}/${id}/${route}`,
    b: (route: string) => `${b}/${id}/${route}`,
    hostA: new URL(a).host,
    hostB: new URL(b).host,
    redirect: (status: number, to: string) => `${a}/${id}/redirect/${status}?to=${encodeURIComponent(to)}`,
    log: async () =>
      (await (await fetch(`${a}/log/${id}`)).json()) as { requests: any[]; streams: Array<{ sent: number; finished: boolean; closedEarly: boolean }> },
  };
}

/** What the echo route saw, from a tool result. */
const echoed = (result: any) => JSON.parse(result.value.body) as { port: number; method: string; headers: Record<string, string>; body: string };

describe("http kind", () => {
  const origin = () => new URL(env.FAKE_OPENAI_URL);

  it("GETs an allowed host and truncates long responses with a flag", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `http-${crypto.randomUUID()}`, []);
    const url = fake.baseURL.replace(/\/v1$/, "");
    const { results } = await callHttp(`allow: ["${env.FAKE_OPENAI_HOST}"], max_response_chars: 10`, [{ name: "web_fetch", args: { url } }]);
    expect(results[0]).toMatchObject({
      ok: true,
      value: { status: 200, content_type: "application/json", body: '{"requests', truncated: true, final_url: url },
    });
  });

  it("refuses any other host without making a request", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    try {
      const { results } = await callHttp(`allow: ["api.github.com"]`, [{ name: "web_fetch", args: { url: `${origin().origin}/x` } }]);
      expect(results[0]).toEqual(expect.objectContaining({ ok: false, error: `host ${origin().host} is not allowed; this toolset may reach: api.github.com` }));
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("asks before methods other than GET/HEAD", async () => {
    const { out } = await callHttp(`allow: ["${env.FAKE_OPENAI_HOST}"]`, [
      { name: "web_fetch", args: { url: `${origin().origin}/x`, method: "POST", body: "{}" } },
    ]);
    expect(out).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "web_fetch", args: { method: "POST" } }] });
  });

  it("labels a JSON body as application/json unless the call says otherwise", async () => {
    const sent: Array<string | null> = [];
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (_u, init) => {
      sent.push(new Headers(init?.headers).get("content-type"));
      return new Response("ok");
    });
    try {
      await callHttp(
        `allow: ["example.com"]`,
        [
          { name: "web_fetch", args: { url: "https://example.com/a", method: "POST", body: '{"x":1}' } },
          { name: "web_fetch", args: { url: "https://example.com/b", method: "POST", body: "plain text" } },
          { name: "web_fetch", args: { url: "https://example.com/c", method: "POST", body: "{}", headers: { "Content-Type": "text/x-custom" } } },
        ],
        { approval: allowAll },
      );
      expect(sent.sort()).toEqual(["application/json", "text/x-custom", null].sort());
    } finally {
      spy.mockRestore();
    }
  });

  it("times out with a clear error", async () => {
    const spy = vi
      .spyOn(globalThis, "fetch")
      .mockImplementation((_u, init) => new Promise((_r, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))));
    try {
      const { results } = await callHttp(`allow: ["example.com"], timeout_ms: 20`, [{ name: "web_fetch", args: { url: "https://example.com/slow" } }]);
      expect(results[0]).toMatchObject({ ok: false, error: "request to example.com timed out after 20 ms" });
    } finally {
      spy.mockRestore();
    }
  });
});

describe("http kind: ports in the allow-list", () => {
  it("an entry without a port allows only the scheme's default port; host:port allows that port", async () => {
    const up = upstream();
    const bare = await callHttp(`allow: ["127.0.0.1"]`, [{ name: "web_fetch", args: { url: up.a("echo") } }]);
    expect(bare.results[0]).toMatchObject({ ok: false, error: `host ${up.hostA} is not allowed; this toolset may reach: 127.0.0.1` });
    expect((await up.log()).requests).toEqual([]);

    const withPort = await callHttp(`allow: ["${up.hostA}"]`, [
      { name: "web_fetch", args: { url: up.a("echo") } },
      { name: "web_fetch", args: { url: up.b("echo") } },
    ]);
    expect(withPort.results[0]).toMatchObject({ ok: true, value: { status: 200 } });
    expect(withPort.results[1]).toMatchObject({ ok: false, error: `host ${up.hostB} is not allowed; this toolset may reach: ${up.hostA}` });
    expect((await up.log()).requests.map((r) => r.port)).toEqual([Number(new URL(env.FAKE_UPSTREAM_A).port)]);
  });

  it("refuses entries that are not a host, host:port or *.domain when the worker file loads", () => {
    for (const bad of ["https://api.github.com", "api.*.com", "*", "host:0", "host:99999", "host:http", "user@host"]) {
      expect(() => harness({ "w.worker": workerFile(`name: w\ntoolsets:\n  web: { use: http, allow: ["${bad}"] }`) }), bad).toThrow(
        /toolsets\.web\.allow\.0: /,
      );
    }
    expect(() =>
      harness({ "w.worker": workerFile(`name: w\ntoolsets:\n  web: { use: http, allow: ["*.example.com", "example.com:8443", "[::1]:8080"] }`) }),
    ).not.toThrow();
  });
});

describe("http kind: redirects", () => {
  it("refuses a redirect to a host the allow-list does not name, naming the hop, and sends nothing there", async () => {
    const up = upstream();
    const to = up.b("echo");
    const { results } = await callHttp(`allow: ["${up.hostA}"]`, [{ name: "web_fetch", args: { url: up.redirect(302, to) } }]);
    expect(results[0]).toMatchObject({ ok: false, error: `redirect 1 to ${to} refused: host ${up.hostB} is not allowed; this toolset may reach: ${up.hostA}` });
    expect((await up.log()).requests.map((r) => r.port)).toEqual([Number(new URL(env.FAKE_UPSTREAM_A).port)]);
  });

  it("keeps configured headers on the first origin and drops them (and credentials) at a hop to another origin", async () => {
    const up = upstream();
    const config = `allow: ["${up.hostA}", "${up.hostB}"], headers: { X-Api-Key: "\${SECRET}", Authorization: "Bearer \${SECRET}" }`;
    const calls = [
      { name: "web_fetch", args: { url: up.redirect(307, up.a("echo")) } },
      { name: "web_fetch", args: { url: up.redirect(302, up.b("echo")), headers: { "X-Trace": "t1" } } },
    ];
    const { results } = await callHttp(config, calls, { vars: { SECRET: "s3cret" } });
    const same = echoed(results[0]);
    expect(same.headers).toMatchObject({ "x-api-key": "s3cret", authorization: "Bearer s3cret" });
    const other = echoed(results[1]);
    expect(other.port).toBe(Number(new URL(env.FAKE_UPSTREAM_B).port));
    expect(other.headers["x-api-key"]).toBeUndefined();
    expect(other.headers.authorization).toBeUndefined();
    expect(other.headers["x-trace"]).toBe("t1");
    expect(results[1].value.final_url).toBe(up.b("echo"));
    expect(JSON.stringify((await up.log()).requests.filter((r: any) => r.port === other.port))).not.toContain("s3cret");
  });

  it("follows at most 5 redirects", async () => {
    const up = upstream();
    const { results } = await callHttp(`allow: ["${up.hostA}"]`, [{ name: "web_fetch", args: { url: up.a("loop/0") } }]);
    expect(results[0]).toMatchObject({ ok: false, error: `too many redirects: more than 5, the last to ${up.a("loop/6")}` });
    expect((await up.log()).requests.map((r) => r.path)).toEqual([0, 1, 2, 3, 4, 5].map((n) => new URL(up.a(`loop/${n}`)).pathname));
  });

  it("turns a 303 (and a 302 after POST) into a GET without body; 307 and 308 keep method and body", async () => {
    const up = upstream();
    const post = (status: number) => ({ name: "web_fetch", args: { url: up.redirect(status, up.a("echo")), method: "POST", body: '{"n":1}' } });
    const { results } = await callHttp(`allow: ["${up.hostA}"]`, [post(303), post(302), post(307), post(308)], { approval: allowAll });
    const [s303, s302, s307, s308] = results.map(echoed);
    for (const e of [s303, s302]) {
      expect(e).toMatchObject({ method: "GET", body: "" });
      expect(e!.headers["content-type"]).toBeUndefined();
    }
    for (const e of [s307, s308]) expect(e).toMatchObject({ method: "POST", body: '{"n":1}', headers: { "content-type": "application/json" } });
  });
});

describe("http kind: method-override headers count as that method", () => {
  it("asks for a GET that overrides to DELETE, and for a POST that claims to be a GET", async () => {
    const up = upstream();
    for (const [method, header, value] of [
      ["GET", "X-HTTP-Method-Override", "DELETE"],
      ["GET", "x-http-method", "patch"],
      ["GET", "X-Method-Override", "PUT"],
      ["POST", "X-HTTP-Method-Override", "GET"],
    ]) {
      const { out } = await callHttp(`allow: ["${up.hostA}"]`, [{ name: "web_fetch", args: { url: up.a("echo"), method, headers: { [header!]: value! } } }]);
      expect(out.status, `${method} + ${header}: ${value}`).toBe("awaiting_approval");
    }
    const safe = await callHttp(`allow: ["${up.hostA}"]`, [{ name: "web_fetch", args: { url: up.a("echo"), headers: { "X-HTTP-Method-Override": "HEAD" } } }]);
    expect(safe.out.status).toBe("succeeded");
    expect((await up.log()).requests).toHaveLength(1);
  });
});

describe("http kind: the body is read up to a byte cap, then cancelled", () => {
  /** Waits until the upstream has seen the stream end (the client hung up) — no timing assumed, just a bounded poll. */
  async function streamEnded(up: ReturnType<typeof upstream>) {
    for (let i = 0; i < 100; i++) {
      const s = (await up.log()).streams[0];
      if (s && (s.closedEarly || s.finished)) return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    return (await up.log()).streams[0];
  }

  for (const route of ["huge", "endless"]) {
    it(`returns the first bytes of a ${route} response with truncated: true, and the upstream sees the connection cancelled`, async () => {
      const up = upstream();
      const { results } = await callHttp(`allow: ["${up.hostA}"], max_response_chars: 1000`, [{ name: "web_fetch", args: { url: up.a(route) } }]);
      expect(results[0]).toMatchObject({ ok: true, value: { status: 200, body: "a".repeat(1000), truncated: true } });
      const s = await streamEnded(up);
      expect(s).toMatchObject({ finished: false, closedEarly: true });
      expect(s!.sent).toBeLessThan(16 * 1024 * 1024);
    });
  }

  it("bounds the body read by timeout_ms too", async () => {
    const up = upstream();
    const { results } = await callHttp(`allow: ["${up.hostA}"], timeout_ms: 300`, [{ name: "web_fetch", args: { url: up.a("stall") } }]);
    expect(results[0]).toMatchObject({ ok: false, error: `request to ${up.hostA} timed out after 300 ms` });
  });

  it("caps in UTF-8 bytes too, without cutting a character in half", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("é".repeat(100)));
    try {
      const { results } = await callHttp(`allow: ["example.com"], max_response_chars: 11`, [{ name: "web_fetch", args: { url: "https://example.com/" } }]);
      expect(results[0]).toMatchObject({ ok: true, value: { body: "é".repeat(5), truncated: true } });
    } finally {
      spy.mockRestore();
    }
  });
});

describe("http kind: Idempotency-Key", () => {
  it("sends the call's key on POST, the same key when the call runs again after a crash, and none on GET", async () => {
    const up = upstream();
    const calls = [
      { name: "web_fetch", args: { url: up.a("echo"), method: "POST", body: "{}" } },
      { name: "web_fetch", args: { url: up.a("echo"), method: "DELETE" } },
      { name: "web_fetch", args: { url: up.a("echo") } },
    ];
    const runId = `run-${crypto.randomUUID()}`;
    const first = await callHttp(`allow: ["${up.hostA}"]`, calls, { approval: allowAll, runId });
    // A crash before the results were recorded: the run replays onto an empty journal.
    const again = await callHttp(`allow: ["${up.hostA}"]`, calls, { approval: allowAll, runId });
    const other = await callHttp(`allow: ["${up.hostA}"]`, calls, { approval: allowAll, runId: `${runId}-other` });
    const keys = (r: typeof first) => r.results.map((x) => echoed(x).headers["idempotency-key"]);
    const [post, del, get] = keys(first);
    expect(post).toMatch(/^ew_[0-9a-f]{40}$/);
    expect(del).toMatch(/^ew_[0-9a-f]{40}$/);
    expect(del).not.toBe(post);
    expect(get).toBeUndefined();
    expect(keys(again)).toEqual([post, del, undefined]);
    expect(keys(other)[0]).not.toBe(post);
  });

  it("sends none with idempotency_key: false, and the call's own key wins", async () => {
    const up = upstream();
    const off = await callHttp(`allow: ["${up.hostA}"], idempotency_key: false`, [{ name: "web_fetch", args: { url: up.a("echo"), method: "POST" } }], {
      approval: allowAll,
    });
    expect(echoed(off.results[0]).headers["idempotency-key"]).toBeUndefined();
    const own = await callHttp(
      `allow: ["${up.hostA}"]`,
      [{ name: "web_fetch", args: { url: up.a("echo"), method: "POST", headers: { "Idempotency-Key": "mine" } } }],
      { approval: allowAll },
    );
    expect(echoed(own.results[0]).headers["idempotency-key"]).toBe("mine");
  });
});
