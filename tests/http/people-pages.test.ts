import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/http/app";
import { signSession } from "../../src/tokens/session-token";
import { fromBase64Url, toBase64Url } from "../../src/tokens/base64url";
import { signApprovalToken } from "../../src/tokens/approval-token";
import { http } from "../../src/engine/toolsets/kinds/http";
import { InboxPage } from "../../src/views/inbox-page";
import { RUN_LIVE_SCRIPT } from "../../src/views/run-live-script";
import { effectUrl, script, settle, stub } from "../durable-objects/helpers";
import { accessKeys } from "../support/access-jwt";

const BASE = "https://edgework.test";
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`${BASE}${path}`, { redirect: "manual", ...init }));
const html = { Accept: "text/html" };
const form = (fields: Record<string, string>, cookie = "") => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
  body: new URLSearchParams(fields).toString(),
});
/** `name=value` of each Set-Cookie, for sending back. */
const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .join("; ");
const csrfIn = async (res: Response) => /name="csrf" value="([^"]+)"/.exec(await res.text())![1]!;

async function signIn(): Promise<string> {
  const page = await call("/login");
  const loginCookie = cookiesOf(page);
  const res = await call("/login", form({ csrf: await csrfIn(page), token: "test-token", next: "/inbox" }, loginCookie));
  expect(res.status).toBe(303);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith("__Host-edgework_session="))!;
}

async function startLive(replies: unknown[]): Promise<string> {
  await script("live-writer", replies);
  const res = await call("/runs", {
    method: "POST",
    headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
    body: JSON.stringify({ worker: "live-writer", input: "go" }),
  });
  return ((await res.json()) as { id: string }).id;
}

describe("no page without the token, a session, Access or an approval link", () => {
  it("a browser is sent to the login form; other clients get 401; the run page and its stream are refused", async () => {
    const toLogin = await call("/inbox?status=failed", { headers: html });
    expect(toLogin.status).toBe(303);
    expect(toLogin.headers.get("Location")).toBe("/login?next=%2Finbox%3Fstatus%3Dfailed");
    expect((await call("/inbox")).status).toBe(401);
    const id = await startLive([{ text: "hi" }]);
    expect((await call(`/runs/${id}/view`)).status).toBe(403);
    expect((await call(`/runs/${id}/view/events`)).status).toBe(403);
    expect((await call("/inbox", { headers: { Authorization: "Bearer test-token" } })).status).toBe(200);
  });
});

describe("login form → session cookie", () => {
  it("signs in with the API token: HttpOnly, Secure, SameSite=Strict, expiring cookie that opens the inbox and the run page", async () => {
    const page = await call("/login");
    const res = await call("/login", form({ csrf: await csrfIn(page), token: "test-token", next: "/inbox" }, cookiesOf(page)));
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/inbox");
    const set = res.headers.getSetCookie().find((c) => c.startsWith("__Host-edgework_session="))!;
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/Secure/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).toMatch(/Max-Age=43200/);
    expect(set).toMatch(/Path=\//);
    const session = set.split(";")[0]!;
    const inbox = await call("/inbox", { headers: { cookie: session } });
    expect(inbox.status).toBe(200);
    expect(await inbox.text()).toContain("Waiting for a decision");
    const id = await startLive([{ text: "hi" }]);
    expect((await call(`/runs/${id}/view`, { headers: { cookie: session } })).status).toBe(200);
  });

  it("a wrong token is refused and sets no session; an open redirect in next is not followed", async () => {
    const page = await call("/login");
    const wrong = await call("/login", form({ csrf: await csrfIn(page), token: "guess" }, cookiesOf(page)));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie().some((c) => c.startsWith("__Host-edgework_session="))).toBe(false);
    const page2 = await call("/login");
    const res = await call("/login", form({ csrf: await csrfIn(page2), token: "test-token", next: "//evil.example/x" }, cookiesOf(page2)));
    expect(res.headers.get("Location")).toBe("/inbox");
    // A tab (or other control character) that a browser drops would turn "/\t/evil.example" into "//evil.example".
    for (const next of ["/\t/evil.example", "/\n/evil.example", "/ /evil.example", "/\\evil.example"]) {
      const p = await call("/login");
      const r = await call("/login", form({ csrf: await csrfIn(p), token: "test-token", next }, cookiesOf(p)));
      expect(r.headers.get("Location"), JSON.stringify(next)).toBe("/inbox");
    }
    const p3 = await call("/login");
    const ok = await call("/login", form({ csrf: await csrfIn(p3), token: "test-token", next: "/inbox?status=failed" }, cookiesOf(p3)));
    expect(ok.headers.get("Location")).toBe("/inbox?status=failed");
  });

  it("CSRF: a login or logout form without its token (or with another browser's) is refused with 403", async () => {
    const page = await call("/login");
    const cookie = cookiesOf(page);
    expect((await call("/login", form({ token: "test-token" }, cookie))).status).toBe(403);
    const other = await call("/login"); // a token minted for another browser's nonce
    expect((await call("/login", form({ csrf: await csrfIn(other), token: "test-token" }, cookie))).status).toBe(403);
    const session = await signIn();
    expect((await call("/logout", form({}, session))).status).toBe(403);
    const inbox = await call("/inbox", { headers: { cookie: session } });
    const out = await call("/logout", form({ csrf: await csrfIn(inbox) }, session));
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie().find((c) => c.startsWith("__Host-edgework_session="))).toMatch(/Max-Age=0/);
  });

  it("sign-out ends the session on the server: the same cookie replayed opens nothing, a fresh sign-in works, and the record goes at expiry", async () => {
    const session = await signIn();
    const inbox = await call("/inbox", { headers: { cookie: session } });
    expect(inbox.status).toBe(200);
    const csrf = await csrfIn(inbox);
    const out = await call("/logout", form({ csrf }, session));
    expect(out.status).toBe(303);
    // A copy of the cookie (a stolen one, or a browser that ignored Max-Age=0): refused everywhere.
    expect((await call("/inbox", { headers: { ...html, cookie: session } })).headers.get("Location")).toBe("/login?next=%2Finbox");
    expect((await call("/inbox", { headers: { cookie: session } })).status).toBe(401);
    const id = await startLive([{ text: "hi" }]);
    expect((await call(`/runs/${id}/view`, { headers: { cookie: session } })).status).toBe(403);
    expect((await call(`/runs/${id}/view/events`, { headers: { cookie: session } })).status).toBe(403);
    expect((await call("/logout", form({ csrf }, session))).status).toBe(403);
    const again = await signIn();
    expect(again).not.toBe(session);
    expect((await call("/inbox", { headers: { cookie: again } })).status).toBe(200);
    // What is kept is bounded: the record of the ended session deletes itself when its token expires.
    const sid = (JSON.parse(new TextDecoder().decode(fromBase64Url(session.split("=")[1]!.split(".")[0]!))) as { sid: string }).sid;
    const ended = env.ENDED_SESSIONS.getByName(sid);
    expect(await ended.ended()).toBe(true);
    expect(await runDurableObjectAlarm(ended)).toBe(true);
    expect(await runInDurableObject(ended, (_o, state) => state.storage.kv.get("ended_until"))).toBeUndefined();
  });

  it("forged, re-signed, tampered or expired session cookies open nothing", async () => {
    const session = await signIn();
    const [, value] = session.split("=") as [string, string];
    const [body, mac] = value.split(".") as [string, string];
    const longer = toBase64Url(new TextEncoder().encode(JSON.stringify({ sid: "x", exp: Date.now() + 10 ** 10 })));
    const forged = [
      `${longer}.${mac}`, // payload changed, old MAC
      `${body}.${mac.slice(0, -2)}AA`, // MAC changed
      await signSession({ sid: "x", exp: Date.now() + 60_000 }, "another-secret", "test-token"), // another key
      await signSession({ sid: "x", exp: Date.now() + 60_000 }, env.APPROVAL_SECRET!, "an-old-api-token"), // signed before API_TOKEN rotated
      await signSession({ sid: "x", exp: Date.now() - 1 }, env.APPROVAL_SECRET!, "test-token"), // expired
      "not-a-cookie",
    ];
    for (const v of forged) {
      const res = await call("/inbox", { headers: { ...html, cookie: `__Host-edgework_session=${v}` } });
      expect(res.status, v).toBe(303);
    }
  });
});

describe("Cloudflare Access", () => {
  const TEAM = "edgework-team";
  const ISSUER = "https://edgework-team.cloudflareaccess.com";
  const accessEnv = { ...env, ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: "aud-tag-1" };
  afterEach(() => vi.restoreAllMocks());

  const keys = accessKeys;

  it("a valid JWT opens the inbox; a bad signature, expired, not-yet-valid, wrong aud or wrong issuer does not; keys come from the team's certs URL only", async () => {
    const { jwk, sign } = await keys();
    const other = await keys();
    const realFetch = globalThis.fetch;
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.startsWith(ISSUER)) {
        fetched.push(url);
        return Response.json({ keys: [jwk] });
      }
      return realFetch(input, init);
    });
    const now = Math.floor(Date.now() / 1000);
    const good = { iss: ISSUER, aud: ["aud-tag-1"], sub: "user-1", email: "ann@example.com", iat: now, nbf: now - 5, exp: now + 300 };
    const open = (jwt: string) =>
      app.fetch(new Request(`${BASE}/inbox`, { headers: { "Cf-Access-Jwt-Assertion": jwt } }), accessEnv, {
        waitUntil() {},
        passThroughOnException() {},
        props: {},
      } as unknown as ExecutionContext);
    const ok = await open(await sign(good));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("ann@example.com");
    const refused = {
      "bad signature": await other.sign(good),
      expired: await sign({ ...good, exp: now - 1 }),
      "not yet valid": await sign({ ...good, nbf: now + 600 }),
      "wrong aud": await sign({ ...good, aud: ["another-app"] }),
      "wrong issuer": await sign({ ...good, iss: "https://evil.cloudflareaccess.com" }),
      garbage: "a.b.c",
    };
    for (const [why, jwt] of Object.entries(refused)) expect((await open(jwt)).status, why).toBe(401);
    expect(new Set(fetched)).toEqual(new Set([`${ISSUER}/cdn-cgi/access/certs`]));
    // Without Access configured, the header opens nothing.
    expect((await call("/inbox", { headers: { "Cf-Access-Jwt-Assertion": await sign(good) } })).status).toBe(401);
  });

  it("a service token (empty sub) is known by its client id, each its own identity; one with no client id, or a person's without sub, opens nothing", async () => {
    // Its own team: keys are cached per issuer for the isolate, and this test signs with a pair of its own.
    const issuer = "https://edgework-services.cloudflareaccess.com";
    const serviceEnv = { ...accessEnv, ACCESS_TEAM_DOMAIN: "edgework-services" };
    const { jwk, sign } = await keys();
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) =>
      (input instanceof Request ? input.url : String(input)).startsWith(issuer) ? Response.json({ keys: [jwk] }) : realFetch(input, init),
    );
    const now = Math.floor(Date.now() / 1000);
    // What Access signs for a service token: no email, an empty sub, the client id as common_name.
    const service = { iss: issuer, aud: ["aud-tag-1"], sub: "", common_name: "5b3c1f.access", type: "app", identity_nonce: "", iat: now, exp: now + 300 };
    const open = async (claims: Record<string, unknown>) =>
      app.fetch(new Request(`${BASE}/inbox`, { headers: { "Cf-Access-Jwt-Assertion": await sign(claims) } }), serviceEnv, {
        waitUntil() {},
        passThroughOnException() {},
        props: {},
      } as unknown as ExecutionContext);
    const first = await open(service);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("service-token:5b3c1f.access");
    expect(await (await open({ ...service, common_name: "9e0d2a.access" })).text()).toContain("service-token:9e0d2a.access");
    for (const claims of [
      { ...service, common_name: undefined },
      { ...service, common_name: "" },
      { ...service, common_name: "a b" },
      { ...service, sub: undefined },
    ])
      expect((await open(claims)).status, JSON.stringify(claims)).toBe(401);
  });
});

describe("security headers on every new page", () => {
  it("login, logout, inbox, the run page (its one script admitted by hash) and its stream", async () => {
    const session = await signIn();
    const id = await startLive([{ text: "hi" }]);
    await settle(id);
    const digest = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(RUN_LIVE_SCRIPT)))));
    const pages: Array<[string, Response, boolean]> = [
      ["login form", await call("/login"), false],
      ["login refused", await call("/login", form({})), false],
      ["logout refused", await call("/logout", form({})), false],
      ["inbox", await call("/inbox", { headers: { cookie: session } }), false],
      ["inbox redirect", await call("/inbox", { headers: html }), false],
      ["run page", await call(`/runs/${id}/view`, { headers: { cookie: session } }), true],
      ["run stream", await call(`/runs/${id}/view/events`, { headers: { cookie: session } }), false],
    ];
    for (const [what, res, withScript] of pages) {
      expect(res.headers.get("Referrer-Policy"), what).toBe("no-referrer");
      expect(res.headers.get("X-Content-Type-Options"), what).toBe("nosniff");
      expect(res.headers.get("Cache-Control"), what).toBe("no-store");
      const csp = new Map(
        (res.headers.get("Content-Security-Policy") ?? "")
          .split(";")
          .map((d) => d.trim().split(/\s+/))
          .map(([n, ...v]) => [n!, v]),
      );
      expect(csp.get("default-src"), what).toEqual(["'none'"]);
      expect(csp.get("frame-ancestors"), what).toEqual(["'none'"]);
      expect(csp.get("script-src"), what).toEqual(withScript ? [`'sha256-${digest}'`] : undefined);
      expect(csp.get("connect-src"), what).toEqual(withScript ? ["'self'"] : undefined);
      if (withScript) {
        const scripts = [...(await res.text()).matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
        expect(scripts, what).toEqual([RUN_LIVE_SCRIPT]);
      }
    }
  });
});

describe("model text as it streams", () => {
  it("is served to watchers in pieces before the step is recorded, from memory, and gone once the turn is recorded", async () => {
    const id = await startLive([{ text: "Hello, world.", chunks: ["Hello, ", "world."], gate: "pool-stream" }]);
    const activation = runDurableObjectAlarm(env.RUNS.getByName(id));
    let seen: string[] = [];
    for (let i = 0; i < 200 && !seen.length; i++) {
      seen = (await stub(id).deltasSince(0)).deltas.map((d) => d.text);
      if (!seen.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toEqual(["Hello, "]);
    const before = (await stub(id).eventsSince("0-0"))!.events.map((e) => e.type);
    expect(before).not.toContain("turn"); // not recorded yet
    await fetch(`${env.FAKE_OPENAI_URL}/gates/pool-stream`, { method: "POST" });
    await activation;
    const view = await settle(id);
    expect(view.status).toBe("succeeded");
    expect(view.output).toBe("Hello, world.");
    expect((await stub(id).deltasSince(0)).deltas).toEqual([]);
    const after = (await stub(id).eventsSince("0-0"))!.events;
    expect(after.find((e) => e.type === "turn")?.data.text).toBe("Hello, world.");
  });
});

describe("calls as people read them", () => {
  it("the approval page shows the http call described (method, host, path, body unfolded) with the raw arguments in <details>, escaped", async () => {
    const id = await startLive([
      {
        tool_calls: [
          {
            name: "fx_fetch",
            arguments: {
              url: `${env.FAKE_OPENAI_URL}/effects/describe?x=1`,
              method: "POST",
              body: JSON.stringify({ note: "<script>alert(1)</script>", inner: JSON.stringify({ n: 1 }) }),
            },
          },
        ],
      },
      { text: "done" },
    ]);
    const approval = (await settle(id)).approvals[0]!;
    const token = await signApprovalToken({ run: id, approval: approval.id, exp: approval.expires_at }, env.APPROVAL_SECRET!);
    const page = await (await call(`/approvals/${token}`)).text();
    expect(page).toContain(`POST ${env.FAKE_OPENAI_HOST}/effects/describe?x=1`);
    expect(page).toContain("&quot;inner&quot;: {\n    &quot;n&quot;: 1\n  }"); // JSON inside the string, unfolded
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain("<script>alert(1)");
    expect(page).toMatch(/<details><summary>Raw arguments<\/summary><pre>/);
  });

  it("the inbox lists a pending approval with its described call, its chain, expiry and a link to decide", () => {
    const now = Date.now();
    const args = { url: "https://api.github.com/repos/o/r/issues/42/comments", method: "POST", body: '{"body":"<b>hi</b>"}' };
    const page = String(
      InboxPage({
        who: "ann@example.com",
        csrf: "c",
        truncated: false,
        now,
        filter: {},
        runs: [],
        approvals: [
          {
            run_id: "r1",
            run_worker: "triage",
            id: "a1",
            tool: "gh_fetch",
            worker_chain: ["triage", "commenter"],
            created_at: now - 60_000,
            expires_at: now + 60_000,
            args,
            call: http.definitions[0]!.describe!(args),
            decideLink: "/approvals/t",
          },
        ],
      }),
    );
    expect(page).toContain("POST api.github.com/repos/o/r/issues/42/comments");
    expect(page).toContain("&lt;b&gt;hi&lt;/b&gt;");
    expect(page).toContain("triage → commenter");
    expect(page).toContain('href="/approvals/t"');
  });

  it("the inbox lists a real paused run's approval from the run index, its call described, and the run among recent runs", async () => {
    const id = `inbox-${crypto.randomUUID()}`;
    await script("inbox-writer", [
      { tool_calls: [{ id: "p", name: "fx_fetch", arguments: { url: `${effectUrl(id)}?x=1`, method: "POST", body: '{"note":"{\\"deep\\":true}"}' } }] },
      { text: "done" },
    ]);
    await stub(id).start({ id, worker: "inbox-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    expect((await settle(id)).status).toBe("awaiting_approval");
    await vi.waitFor(async () => {
      const page = await (await call("/inbox", { headers: { Authorization: "Bearer test-token" } })).text();
      expect(page).toContain(id);
      expect(page).toContain(`POST ${new URL(env.FAKE_OPENAI_URL).host}/effects/${id}?x=1`);
    });
    const failedOnly = await (await call("/inbox?status=failed", { headers: { Authorization: "Bearer test-token" } })).text();
    expect(failedOnly.split("Recent runs")[1] ?? "").not.toContain(id);
  });
});
