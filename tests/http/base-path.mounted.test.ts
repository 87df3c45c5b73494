import { env, exports } from "cloudflare:workers";
import { createApp, type ToolsetKind } from "edgework";
import PostalMime from "postal-mime";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailer, type OutgoingMail } from "../../src/email/mailer";
import { files } from "../../src/edgework.generated";
import { effectCount, effectUrl, script, settle } from "../durable-objects/helpers";
import { edgework } from "../fixtures/mounted/index";

// The consumer Worker of tests/fixtures/mounted: its own Hono app, edgework under /agents.
const BASE = "https://edgework.test";
const call = (path: string, init: RequestInit = {}) =>
  exports.default.fetch(new Request(path.startsWith("http") ? path : `${BASE}${path}`, { redirect: "manual", ...init }));
const auth = { Authorization: "Bearer test-token" };
const html = { Accept: "text/html" };
const form = (fields: Record<string, string>, cookie = "") => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
  body: new URLSearchParams(fields).toString(),
});
const setCookies = (res: Response) => res.headers.getSetCookie();
const sendBack = (res: Response) =>
  setCookies(res)
    .map((c) => c.split(";")[0]!)
    .join("; ");
const unescapeAmp = (s: string) => s.replace(/&amp;/g, "&");

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = [];
  const original = mailer.send;
  vi.spyOn(mailer, "send").mockImplementation(async (binding, mail) => {
    sent.push(mail);
    return original.call(mailer, binding, mail);
  });
});
afterEach(() => vi.restoreAllMocks());

/** A pause-writer run started through the API under /agents, settled at its approval. */
async function pausedRun(tag: string): Promise<{ id: string; statusUrl: string }> {
  await script("pause-writer", [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST", body: "x" } }] },
    { text: "posted" },
  ]);
  const res = await call("/agents/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ worker: "pause-writer", input: "go" }),
  });
  expect(res.status).toBe(202);
  const { id, status_url } = (await res.json()) as { id: string; status_url: string };
  expect((await settle(id)).status).toBe("awaiting_approval");
  return { id, statusUrl: status_url };
}

describe("edgework mounted under /agents of a consumer's Hono app", () => {
  it("the API answers under the prefix, with prefixed status URLs; the consumer's own routes stay its own", async () => {
    const { id, statusUrl } = await pausedRun("mounted-api");
    expect(statusUrl).toBe(`${BASE}/agents/runs/${id}`);
    const got = await call(statusUrl, { headers: auth });
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ id, status: "awaiting_approval" });
    expect((await call("/agents/workers", { headers: auth })).status).toBe(200);
    expect((await call("/agents/runs", { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    // Unprefixed paths are the consumer's: its pages, or its 404 — never edgework's API.
    expect(await (await call("/")).text()).toBe("the consumer's own home page");
    expect(await (await call("/inbox", { headers: html })).text()).toBe("the consumer's own inbox");
    expect((await call(`/runs/${id}`, { headers: auth })).status).toBe(404);
    // Mounted with outer.route, a path under /agents that edgework has no route for gets the consumer's 404.
    expect((await call("/agents/nothing-here", { headers: auth })).status).toBe(404);
  });

  it("the approval email's link, the approval page's form and its run page all carry /agents; approving through them completes the run", async () => {
    const { id } = await pausedRun("mounted-link");
    expect(sent).toHaveLength(1);
    const mail = await PostalMime.parse(sent[0]!.raw);
    const link = /href="(https:\/\/edgework\.test\/[^"?]+)\?intent=approve"/.exec(mail.html!)![1]!;
    expect(link).toMatch(/^https:\/\/edgework\.test\/agents\/approvals\/[^/]+$/);
    expect(mail.text).toContain(`${link}?intent=approve`);
    const token = link.slice(link.lastIndexOf("/") + 1);

    const page = await call(`${link}?intent=approve`);
    expect(page.status).toBe(200);
    const pageHtml = await page.text();
    expect(pageHtml).toContain(`action="/agents/approvals/${token}"`);
    expect(unescapeAmp(pageHtml)).toContain(`href="/agents/runs/${id}/view?token=${token}"`);

    const decided = await call(`/agents/approvals/${token}`, form({ decision: "approve" }));
    expect(decided.status).toBe(200);
    const runLink = unescapeAmp(/href="(\/agents\/runs\/[^"]+\/view\?token=[^"]+)"/.exec(await decided.text())![1]!);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "posted", approvals: [{ status: "approved" }] });
    expect(await effectCount("mounted-link")).toBe(1);

    const runPage = await call(runLink);
    expect(runPage.status).toBe(200);
    const runHtml = unescapeAmp(await runPage.text());
    expect(runHtml).toContain("succeeded");
    expect(runHtml).toContain(`data-events="/agents/runs/${id}/view/events?token=${token}"`);
    const events = await call(`/agents/runs/${id}/view/events?token=${token}`);
    expect(events.status).toBe(200);
    expect(events.headers.get("content-type")).toContain("text/event-stream");
    await events.body?.cancel();
    // The same page at the unprefixed path is not edgework's.
    expect((await call(`/runs/${id}/view?token=${token}`)).status).toBe(404);
  });

  it("sign-in: the login redirect, forms and links carry /agents; cookies are __Secure- with Path=/agents (a __Host- cookie needs Path=/)", async () => {
    const toLogin = await call("/agents/runs/x/view", { headers: html });
    expect(toLogin.status).toBe(403);
    const inboxFirst = await call("/agents/inbox?status=failed", { headers: html });
    expect(inboxFirst.status).toBe(303);
    expect(inboxFirst.headers.get("Location")).toBe("/agents/login?next=%2Fagents%2Finbox%3Fstatus%3Dfailed");

    const loginPage = await call("/agents/login");
    const loginHtml = await loginPage.text();
    expect(loginHtml).toContain('action="/agents/login"');
    expect(loginHtml).toContain('value="/agents/inbox"');
    const nonce = setCookies(loginPage);
    expect(nonce).toHaveLength(1);
    expect(nonce[0]).toMatch(/^__Secure-edgework_login=[^;]+;.*Path=\/agents(;|$)/);
    expect(nonce[0]).toMatch(/; Secure/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(loginHtml)![1]!;

    const signedIn = await call("/agents/login", form({ csrf, token: "test-token", next: "/agents/inbox" }, sendBack(loginPage)));
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("Location")).toBe("/agents/inbox");
    const session = setCookies(signedIn).find((c) => c.startsWith("__Secure-edgework_session="))!;
    expect(session).toMatch(/Path=\/agents(;|$)/);
    expect(setCookies(signedIn).some((c) => c.startsWith("__Host-"))).toBe(false);
    const cookie = session.split(";")[0]!;

    const { id } = await pausedRun("mounted-inbox");
    const inbox = await call("/agents/inbox", { headers: { ...html, cookie } });
    expect(inbox.status).toBe(200);
    const inboxHtml = unescapeAmp(await inbox.text());
    expect(inboxHtml).toContain('href="/agents/inbox"');
    expect(inboxHtml).toContain(`href="/agents/runs/${id}/view"`);
    expect(inboxHtml).toMatch(/href="\/agents\/approvals\/[^"]+">Decide</);
    expect(inboxHtml).toContain('action="/agents/logout"');
    expect((await call(`/agents/runs/${id}/view`, { headers: { ...html, cookie } })).status).toBe(200);

    const logoutCsrf = /action="\/agents\/logout"[\s\S]*?name="csrf" value="([^"]+)"/.exec(inboxHtml)![1]!;
    const out = await call("/agents/logout", form({ csrf: logoutCsrf }, cookie));
    expect(out.status).toBe(303);
    expect(out.headers.get("Location")).toBe("/agents/login");
    expect(setCookies(out).find((c) => c.startsWith("__Secure-edgework_session="))).toMatch(/Max-Age=0.*Path=\/agents|Path=\/agents.*Max-Age=0/);
  });

  it("sign-in's next stays under /agents: a path of the host site (or one that leaves /agents by dot segments) goes to the app's inbox", async () => {
    const signIn = async (next: string) => {
      const page = await call(`/agents/login?next=${encodeURIComponent(next)}`);
      const shown = unescapeAmp(/name="next" value="([^"]*)"/.exec(await page.clone().text())![1]!);
      const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
      const res = await call("/agents/login", form({ csrf, token: "test-token", next }, sendBack(page)));
      expect(res.status).toBe(303);
      return { shown, location: res.headers.get("Location") };
    };
    for (const next of ["/inbox", "/", "/agentsx/inbox", "/agents/../inbox", "/agents/%2e%2e/inbox", "/agents/./../admin"])
      expect([next, await signIn(next)]).toEqual([next, { shown: "/agents/inbox", location: "/agents/inbox" }]);
    expect(await signIn("/agents/runs/x/view?token=t")).toEqual({ shown: "/agents/runs/x/view?token=t", location: "/agents/runs/x/view?token=t" });
    expect((await signIn("/agents")).location).toBe("/agents");
  });

  it("a question's answer form, a fork's status_url and forked-from links, the inbox's fork and waiting links all carry /agents", async () => {
    const start = async (worker: string) => {
      const res = await call("/agents/runs", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ worker, input: "go" }),
      });
      return ((await res.json()) as { id: string }).id;
    };
    // The answer form posts the capability token to edgework's path, never to the host app's /approvals/<token>.
    await script("asker", [{ tool_calls: [{ id: "q", name: "people_ask", arguments: { question: "41 or 42?", to: "lead@example.com" } }] }, { text: "ok" }]);
    const asker = await start("asker");
    expect((await settle(asker)).status).toBe("waiting");
    const link = /Answer: (https:\/\/edgework\.test\/\S+)/.exec((await PostalMime.parse(sent.at(-1)!.raw)).text!)![1]!;
    expect(link).toMatch(/^https:\/\/edgework\.test\/agents\/approvals\/[^/]+$/);
    const question = await (await call(link)).text();
    expect(question).toContain('<textarea name="answer"');
    expect(question).toContain(`action="/agents/approvals/${link.slice(link.lastIndexOf("/") + 1)}"`);

    const { id: source } = await pausedRun("mounted-fork");
    const [first] = ((await (await call(`/agents/runs/${source}/journal`, { headers: auth })).json()) as { steps: Array<{ key: string }> }).steps;
    await script("pause-writer", [
      { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl("mounted-fork"), method: "POST", body: "x" } }] },
    ]);
    const forked = await call(`/agents/runs/${source}/fork`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ at: first!.key }),
    });
    expect(forked.status).toBe(202);
    const fork = (await forked.json()) as { id: string; status_url: string };
    expect(fork.status_url).toBe(`${BASE}/agents/runs/${fork.id}`);
    expect((await settle(fork.id)).status).toBe("awaiting_approval");
    const forkPage = await call(`/agents/runs/${fork.id}/view`, { headers: { ...auth, ...html } });
    expect(forkPage.status).toBe(200);
    expect(await forkPage.text()).toContain(`run <a href="/agents/runs/${source}/view">${source}</a> before step`);

    await script("wait-agent", [{ tool_calls: [{ id: "s", name: "sleep", arguments: { duration: "20m", reason: "deploy" } }] }]);
    const sleeper = await start("wait-agent");
    expect((await settle(sleeper)).status).toBe("waiting");
    const inbox = await (await call("/agents/inbox", { headers: { ...auth, ...html } })).text();
    expect(inbox).toContain(`fork of <a href="/agents/runs/${source}/view">`);
    const waiting = inbox.slice(inbox.indexOf('<table id="waiting">'), inbox.indexOf("</table>", inbox.indexOf('<table id="waiting">')));
    expect(waiting).toContain(`<a href="/agents/runs/${sleeper}/view">`);
    expect(inbox).not.toMatch(/href="\/(runs|approvals|inbox|login)/);
  });

  it("GET /agents/openapi.json: its server is the app under /agents (paths stay the app's own), its session cookie the __Secure- one", async () => {
    const res = await call("/agents/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { servers: unknown; paths: Record<string, unknown>; components: { securitySchemes: { session: { name: string } } } };
    expect(doc.servers).toEqual([{ url: `${BASE}/agents` }]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/runs", "/runs/{id}", "/openapi.json"]));
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/agents"))).toEqual([]);
    expect(doc.components.securitySchemes.session.name).toBe("__Secure-edgework_session");
  });

  it("the app's own fetch takes full paths under the basePath (outer.all('/agents/*', c => app.fetch(...)))", async () => {
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    const listed = await edgework.fetch(new Request(`${BASE}/agents/workers`, { headers: auth }), env, ctx);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { workers: Array<{ name: string }> }).workers.map((w) => w.name)).toContain("pause-writer");
    expect((await edgework.fetch(new Request(`${BASE}/workers`, { headers: auth }), env, ctx)).status).toBe(404);
    const missing = await edgework.fetch(new Request(`${BASE}/agents/nothing-here`, { headers: auth }), env, ctx);
    expect(await missing.json()).toEqual({ error: "no route GET /agents/nothing-here" });
  });

  it("createApp refuses a basePath that is not /segments, and a kind listed under another name, naming the option", () => {
    for (const bad of ["agents", "/agents/", "//evil.example", "/a b", "/agents?x=1", "/../x", "/a/./b", "/.."]) {
      expect(() => createApp({ files, basePath: bad })).toThrow(`createApp: basePath ${JSON.stringify(bad)} must look like "/agents"`);
    }
    const counter = { kind: "counter" } as unknown as ToolsetKind;
    expect(() => createApp({ files, toolsets: { tally: counter } })).toThrow('createApp: toolsets.tally is the kind "counter"; list it under its own name');
    // Refused before anything was installed: the mounted app still answers under /agents.
    return call("/agents/workers", { headers: auth }).then((res) => expect(res.status).toBe(200));
  });
});
