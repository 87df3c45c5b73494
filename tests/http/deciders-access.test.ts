import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/http/app";
import type { RunView } from "../../src/runs/types";
import { effectUrl, script, settle } from "../durable-objects/helpers";
import { accessKeys } from "../support/access-jwt";

const BASE = "https://edgework.test";
const ISSUER = "https://edgework-team.cloudflareaccess.com";
const accessEnv = { ...env, ACCESS_TEAM_DOMAIN: "edgework-team", ACCESS_AUD: "aud-tag-1" };
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
const fetchApp = (path: string, init: RequestInit = {}) => app.fetch(new Request(`${BASE}${path}`, init), accessEnv, ctx);

// One team key for the file: the app caches a team's keys by key id.
const team = accessKeys();

/** Access's certs served to the app; a signed JWT for `email`. */
async function accessAs(email: string) {
  const { jwk, sign } = await team;
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url.startsWith(ISSUER) ? Response.json({ keys: [jwk] }) : realFetch(input, init);
  });
  const now = Math.floor(Date.now() / 1000);
  return sign({ iss: ISSUER, aud: ["aud-tag-1"], sub: `sub-${email}`, email, iat: now, nbf: now - 5, exp: now + 300 });
}

/** Starts `worker` through POST /runs (API token, plus the Access JWT when given) and settles it at its approval. */
async function startPaused(worker: string, tag: string, jwt?: string): Promise<RunView> {
  await script(worker, [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(tag), method: "POST" } }] }, { text: "posted" }]);
  const res = await fetchApp("/runs", {
    method: "POST",
    headers: { Authorization: "Bearer test-token", "content-type": "application/json", ...(jwt ? { "Cf-Access-Jwt-Assertion": jwt } : {}) },
    body: JSON.stringify({ worker, input: "post it" }),
  });
  const view = await settle(((await res.json()) as { id: string }).id);
  expect(view.status).toBe("awaiting_approval");
  return view;
}

/** The inbox's Decide link for `runId` as the person `jwt` names sees it (the run index is told asynchronously: wait for it). */
async function inboxLink(jwt: string, runId: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const page = await (await fetchApp("/inbox", { headers: { "Cf-Access-Jwt-Assertion": jwt } })).text();
    const row = page.split("<tr>").find((r) => r.includes(`/runs/${runId}/view`));
    const link = row && /href="(\/approvals\/[^"]+)"/.exec(row)?.[1];
    if (link) return link;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} never showed in the inbox`);
}

const decide = (link: string) => fetchApp(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "decision=approve" });

afterEach(() => vi.restoreAllMocks());

describe("who may answer, through Cloudflare Access", () => {
  it("a person at a named domain decides from the inbox: by {email, via: access}", async () => {
    const jwt = await accessAs("Alice@Ops.Example.com");
    const view = await startPaused("named-writer", "access-inbox");
    const res = await decide(await inboxLink(jwt, view.id));
    expect(res.status).toBe(200);
    expect(await settle(view.id)).toMatchObject({ status: "succeeded", approvals: [{ by: { email: "alice@ops.example.com", via: "access" } }] });
  });

  it("a person not named is refused from the inbox with 403 and the reason; nothing changes", async () => {
    const jwt = await accessAs("mallory@example.com");
    const view = await startPaused("named-writer", "access-stranger");
    const res = await decide(await inboxLink(jwt, view.id));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("mallory@example.com is not among the people this approval names");
    expect((await settle(view.id)).approvals[0]!.status).toBe("pending");
  });

  it("the person Access names on POST /runs started the run: recorded as its initiator, refused as its approver", async () => {
    const jwt = await accessAs("approver@example.com");
    const view = await startPaused("pause-writer", "access-initiator", jwt);
    expect(view.trigger).toEqual({ kind: "api", initiator: "approver@example.com" });
    const res = await decide(await inboxLink(jwt, view.id));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("the person who started this run may not decide its approvals");
    expect((await settle(view.id)).approvals[0]!.status).toBe("pending");
  });
});
