import { sign } from "@octokit/webhooks-methods";
import { exports } from "cloudflare:workers";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { triggers } from "../../src/catalog";
import { verifyDelivery } from "../../src/triggers/verify";
import { stub } from "../durable-objects/helpers";

const GITHUB_SECRET = "It's a Secret to Everybody";
const STRIPE_SECRET = "whsec_test_secret";
const hook = (name: string, body: string | Uint8Array, headers: Record<string, string>) =>
  exports.default.fetch(
    new Request(`https://edgework.test/hooks/${name}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }),
  );

const issueEvent = (n: number, action = "opened") =>
  JSON.stringify({
    action,
    issue: { number: n, title: `Crash #${n}`, body: "It crashes.", url: `https://api.github.com/repos/octo/hello/issues/${n}` },
    repository: { full_name: "octo/hello" },
  });

async function github(body: string, delivery: string, secret = GITHUB_SECRET) {
  return hook("github-issues", body, { "X-Hub-Signature-256": await sign(secret, body), "X-GitHub-Delivery": delivery, "X-GitHub-Event": "issues" });
}

const stripe = new Stripe("sk_test_unused");
const stripeEvent = (id: string, type = "charge.dispute.created") => JSON.stringify({ id, type, data: { object: { amount: 4200 } } });
// Stripe's worker build signs with WebCrypto, hence the async variant of generateTestHeaderString.
const stripeHeader = (payload: string, opts: { secret?: string; timestamp?: number } = {}) =>
  stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: opts.secret ?? STRIPE_SECRET, timestamp: opts.timestamp });

describe("GitHub signatures", () => {
  it('accepts GitHub\'s documented example (secret "It\'s a Secret to Everybody", payload "Hello, World!")', async () => {
    const t = triggers().get("github-issues")!;
    const headers = new Headers({
      "X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
      "X-GitHub-Delivery": "d-1",
    });
    expect(await verifyDelivery(t, GITHUB_SECRET, headers, new TextEncoder().encode("Hello, World!"))).toEqual({ ok: true });
    expect(await verifyDelivery(t, GITHUB_SECRET, headers, new TextEncoder().encode("Hello, World?"))).toMatchObject({ ok: false });
    expect(await verifyDelivery(t, "another secret", headers, new TextEncoder().encode("Hello, World!"))).toMatchObject({ ok: false });
  });

  it("a delivery signed by @octokit/webhooks-methods starts the flagship run (202 with run id and status URL)", async () => {
    const res = await github(issueEvent(1), "gh-delivery-1");
    expect(res.status).toBe(202);
    const body = (await res.json()) as { run_id: string; status_url: string; duplicate: boolean };
    expect(body).toMatchObject({ run_id: expect.stringMatching(/^hook_github-issues_[0-9a-f]{32}$/), duplicate: false });
    expect(body.status_url).toBe(`https://edgework.test/runs/${body.run_id}`);
    const view = (await stub(body.run_id).status())!;
    expect(view).toMatchObject({
      worker: "triage",
      status: "queued",
      input: { repo: "octo/hello", number: 1, title: "Crash #1", body: "It crashes.", issue_url: "https://api.github.com/repos/octo/hello/issues/1" },
      trigger: { kind: "webhook", name: "github-issues", delivery: "gh-delivery-1" },
    });
  });

  it("modified bodies, wrong secrets and unsigned deliveries are refused with 401 and start nothing", async () => {
    const body = issueEvent(2);
    const signature = await sign(GITHUB_SECRET, body);
    const cases: Array<[string, Record<string, string>]> = [
      [body.replace("Crash", "Crush"), { "X-Hub-Signature-256": signature }],
      [body, { "X-Hub-Signature-256": await sign("wrong secret", body) }],
      [body, {}],
      [body, { "X-Hub-Signature-256": "sha256=" }],
    ];
    for (const [payload, headers] of cases) {
      const res = await hook("github-issues", payload, { ...headers, "X-GitHub-Delivery": "gh-bad" });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toMatch(/^signature check failed: /);
    }
  });
});

describe("Stripe signatures", () => {
  it("accepts a header made by stripe.webhooks.generateTestHeaderString; the event id is the delivery", async () => {
    const payload = stripeEvent("evt_1");
    const res = await hook("stripe-disputes", payload, { "Stripe-Signature": await stripeHeader(payload) });
    expect(res.status).toBe(202);
    const { run_id } = (await res.json()) as { run_id: string };
    expect(await stub(run_id).status()).toMatchObject({
      worker: "hook-echo",
      input: { kind: "charge.dispute.created", amount: 4200 },
      trigger: { delivery: "evt_1" },
    });
  });

  it("refuses a modified body, a wrong secret and a stale timestamp", async () => {
    const payload = stripeEvent("evt_2");
    const now = Math.floor(Date.now() / 1000);
    for (const [body, header] of [
      [payload.replace("4200", "9999"), await stripeHeader(payload)],
      [payload, await stripeHeader(payload, { secret: "whsec_other" })],
      [payload, await stripeHeader(payload, { timestamp: now - 330 })],
      [payload, await stripeHeader(payload, { timestamp: now + 330 })],
      [payload, "t=abc,v1=00"],
    ] as const) {
      expect((await hook("stripe-disputes", body, { "Stripe-Signature": header })).status).toBe(401);
    }
    expect((await hook("stripe-disputes", payload, { "Stripe-Signature": await stripeHeader(payload, { timestamp: now - 290 }) })).status).toBe(202);
  });
});

describe("hmac and token schemes", () => {
  it("hmac: base64 with a prefix in a configured header", async () => {
    const body = JSON.stringify({ kind: "form" });
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("form-secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)))));
    expect((await hook("signed-form", body, { "X-Form-Signature": `v1=${mac}` })).status).toBe(202);
    expect((await hook("signed-form", body, { "X-Form-Signature": mac })).status).toBe(401);
    expect((await hook("signed-form", body.replace("form", "frm"), { "X-Form-Signature": `v1=${mac}` })).status).toBe(401);
  });

  it("token: the shared secret in a header", async () => {
    const body = JSON.stringify({ kind: "token" });
    expect((await hook("token-form", body, { "X-Webhook-Token": "form-secret" })).status).toBe(202);
    expect((await hook("token-form", body, { "X-Webhook-Token": "form-secre" })).status).toBe(401);
    expect((await hook("token-form", body, {})).status).toBe(401);
  });
});

describe("webhook errors", () => {
  it("unknown trigger → 404; secret env var missing → 503 naming it; body over 1 MiB → 413", async () => {
    const unknown = await hook("nope", "{}", {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'unknown trigger "nope"' });
    const unset = await hook("unconfigured", '{"kind":"x"}', { "X-Webhook-Token": "anything" });
    expect(unset.status).toBe(503);
    expect(((await unset.json()) as { error: string }).error).toMatch(/^NEVER_SET_SECRET is not set/);
    const big = new Uint8Array(1024 * 1024 + 1).fill(32);
    expect((await hook("token-form", big, { "X-Webhook-Token": "form-secret" })).status).toBe(413);
  });

  it("a filter that does not match → 202 {ignored: true}, no run", async () => {
    const res = await github(issueEvent(3, "closed"), "gh-closed");
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ignored: true, reason: 'filter: /action is "closed", not "opened"' });
  });

  it("a payload whose mapped input does not match the worker's schema → 400 with the mismatch; invalid JSON → 400", async () => {
    const body = JSON.stringify({ action: "opened", issue: { number: "seven", title: "x", url: "u" }, repository: { full_name: "o/r" } });
    const res = await github(body, "gh-bad-input");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(
      /^input does not match the input schema of worker "triage" \(workers\/triage\.worker\): number: /,
    );
    expect((await hook("token-form", "{not json", { "X-Webhook-Token": "form-secret" })).status).toBe(400);
  });
});

describe("idempotency", () => {
  it("50 concurrent deliveries of one event start exactly one run", async () => {
    const body = issueEvent(50);
    const responses = await Promise.all(Array.from({ length: 50 }, () => github(body, "gh-same-delivery")));
    const results = (await Promise.all(responses.map((r) => (expect(r.status).toBe(202), r.json())))) as Array<{ run_id: string; duplicate: boolean }>;
    expect(new Set(results.map((r) => r.run_id)).size).toBe(1);
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    const events = (await stub(results[0]!.run_id).eventsSince())!.events;
    expect(events.filter((e) => e.type === "run_queued")).toHaveLength(1);
  });

  it("50 distinct events start 50 runs", async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => github(issueEvent(100 + i), `gh-distinct-${i}`)));
    const results = (await Promise.all(responses.map((r) => r.json()))) as Array<{ run_id: string; duplicate: boolean }>;
    expect(new Set(results.map((r) => r.run_id)).size).toBe(50);
    expect(results.every((r) => !r.duplicate)).toBe(true);
    const views = await Promise.all(results.map((r) => stub(r.run_id).status()));
    expect(
      views
        .map((v) => v!.input as { number: number })
        .map((i) => i.number)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
  });

  it("without a delivery id header the body's hash identifies the delivery", async () => {
    const body = JSON.stringify({ kind: "same" });
    const a = (await (await hook("token-form", body, { "X-Webhook-Token": "form-secret" })).json()) as { run_id: string; duplicate: boolean };
    const b = (await (await hook("token-form", body, { "X-Webhook-Token": "form-secret" })).json()) as { run_id: string; duplicate: boolean };
    expect(b).toEqual({ ...a, duplicate: true });
    expect(await stub(a.run_id).status()).toMatchObject({ trigger: { delivery: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) } });
  });
});

/** An HMAC-SHA256 in base64 with the `v1=` prefix: the signed-form trigger's scheme. */
async function formSignature(body: string) {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("form-secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `v1=${btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)))))}`;
}

type Accepted = { run_id: string; duplicate: boolean };

describe("idempotency comes from signed content, never from an unsigned header", () => {
  it("github: one signed body replayed with fresh X-GitHub-Delivery ids starts one run; the same id and body again is a duplicate", async () => {
    const body = issueEvent(60);
    const answers: Accepted[] = [];
    for (const delivery of ["replay-1", "replay-2", "replay-3", "replay-1"]) {
      const res = await github(body, delivery);
      expect(res.status).toBe(202);
      answers.push((await res.json()) as Accepted);
    }
    expect(new Set(answers.map((a) => a.run_id)).size).toBe(1);
    expect(answers.map((a) => a.duplicate)).toEqual([false, true, true, true]);
    expect((await stub(answers[0]!.run_id).eventsSince())!.events.filter((e) => e.type === "run_queued")).toHaveLength(1);
    expect(await stub(answers[0]!.run_id).status()).toMatchObject({ trigger: { delivery: "replay-1", body_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } });
  });

  it("50 concurrent replays of one body under 50 delivery ids start one run; racing bodies under one id: one wins, the other gets 409", async () => {
    const body = issueEvent(70);
    const replays = (await Promise.all(Array.from({ length: 50 }, async (_, i) => (await github(body, `concurrent-${i}`)).json()))) as Accepted[];
    expect(new Set(replays.map((r) => r.run_id)).size).toBe(1);
    expect(replays.filter((r) => !r.duplicate)).toHaveLength(1);

    const [a, b] = [issueEvent(71), issueEvent(72)];
    const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => [i % 2, (await github(i % 2 ? b : a, "contested")).status] as const));
    const byBody = [0, 1].map((k) => new Set(statuses.filter(([which]) => which === k).map(([, status]) => status)));
    expect(byBody.map((set) => [...set].sort())).toEqual(expect.arrayContaining([[202], [409]]));
  });

  it("github: a used delivery id with a different, validly signed body → 409 naming the id, and no run for that body", async () => {
    expect((await github(issueEvent(61), "gh-reused")).status).toBe(202);
    const conflict = await github(issueEvent(62), "gh-reused");
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: string }).error).toMatch(/^delivery id "gh-reused" \(X-GitHub-Delivery\) came before with another body/);
    // The refused body started nothing: under its own delivery id it is new.
    const fresh = await github(issueEvent(62), "gh-fresh-62");
    expect(((await fresh.json()) as Accepted).duplicate).toBe(false);
  });

  it("hmac: Idempotency-Key is not signed — fresh keys on one body start one run; a used key with another body → 409", async () => {
    const body = JSON.stringify({ kind: "hmac-replay" });
    const signature = await formSignature(body);
    const a = (await (await hook("signed-form", body, { "X-Form-Signature": signature, "Idempotency-Key": "k-a" })).json()) as Accepted;
    const b = (await (await hook("signed-form", body, { "X-Form-Signature": signature, "Idempotency-Key": "k-b" })).json()) as Accepted;
    expect(b).toEqual({ ...a, duplicate: true });
    const other = JSON.stringify({ kind: "hmac-other" });
    const conflict = await hook("signed-form", other, { "X-Form-Signature": await formSignature(other), "Idempotency-Key": "k-a" });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: string }).error).toMatch(/^delivery id "k-a" \(Idempotency-Key\) came before with another body/);
  });

  it("token: nothing is signed, the body's hash decides; a used Idempotency-Key with another body → 409", async () => {
    const body = JSON.stringify({ kind: "token-replay" });
    const a = (await (await hook("token-form", body, { "X-Webhook-Token": "form-secret", "Idempotency-Key": "t-1" })).json()) as Accepted;
    const b = (await (await hook("token-form", body, { "X-Webhook-Token": "form-secret", "Idempotency-Key": "t-2" })).json()) as Accepted;
    expect(b).toEqual({ ...a, duplicate: true });
    expect((await hook("token-form", JSON.stringify({ kind: "token-other" }), { "X-Webhook-Token": "form-secret", "Idempotency-Key": "t-1" })).status).toBe(
      409,
    );
  });

  it("stripe: the event id inside the signed body decides, whatever the signature's timestamp", async () => {
    const payload = stripeEvent("evt_replayed");
    const now = Math.floor(Date.now() / 1000);
    const a = (await (await hook("stripe-disputes", payload, { "Stripe-Signature": await stripeHeader(payload, { timestamp: now - 10 }) })).json()) as Accepted;
    const b = (await (await hook("stripe-disputes", payload, { "Stripe-Signature": await stripeHeader(payload, { timestamp: now }) })).json()) as Accepted;
    expect(b).toEqual({ ...a, duplicate: true });
  });
});
