import { sign } from "@octokit/webhooks-methods";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseJson } from "../../src/engine/data-files";
import { catalog } from "../../src/catalog";
import { parseTriggers } from "../../src/triggers/triggers-file";
import { settle, stub } from "../durable-objects/helpers";

const SECRET = "It's a Secret to Everybody";
const checkSuite = (sha: string, action = "completed") => JSON.stringify({ action, check_suite: { head_sha: sha, conclusion: "success" } });
const signal = async (body: string, delivery: string, secret = SECRET) =>
  exports.default.fetch(
    new Request("https://edgework.test/hooks/ci-signal", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Hub-Signature-256": await sign(secret, body), "X-GitHub-Delivery": delivery },
      body,
    }),
  );

/** Starts fn-waiter runs, each waiting for `event` under its key, and lets them pause (20 at a time). */
async function waiting(runs: Array<[id: string, key: string]>, event: string): Promise<void> {
  for (let i = 0; i < runs.length; i += 20) {
    await Promise.all(
      runs.slice(i, i + 20).map(async ([id, key]) => {
        await stub(id).start({ id, worker: "fn-waiter", input: { event, key }, approvalMode: "ask", budget: {} });
        expect((await settle(id)).status).toBe("waiting");
      }),
    );
  }
}

describe("signal triggers: a signed webhook wakes the runs waiting under its key", () => {
  it("wakes exactly the runs under its key, with 200 runs waiting under other keys; a redelivery wakes nothing more", async () => {
    const mine = ["sig-a", "sig-b", "sig-c"];
    const others = Array.from({ length: 200 }, (_, i) => `sig-other-${i}`);
    await waiting([...mine.map((id): [string, string] => [id, "sha-1"]), ...others.map((id, i): [string, string] => [id, `sha-other-${i}`])], "ci_finished");
    // Same key, another event: not this signal's.
    await waiting([["sig-other-event", "sha-1"]], "deploy_done");

    const res = await signal(checkSuite("sha-1"), "gh-1");
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ signal: "ci_finished", woken: 3 });
    for (const id of mine) {
      expect(await settle(id)).toMatchObject({ status: "succeeded", output: { status: "received", payload: { check_suite: { head_sha: "sha-1" } } } });
    }
    const statuses = await Promise.all([...others, "sig-other-event"].map(async (id) => (await stub(id).status())!.status));
    expect(new Set(statuses)).toEqual(new Set(["waiting"]));

    const again = await signal(checkSuite("sha-1"), "gh-1");
    expect(await again.json()).toEqual({ signal: "ci_finished", woken: 0 });
  }, 180_000);

  it("a bad signature is refused with 401 and wakes nothing; a filtered-out or keyless delivery wakes nothing", async () => {
    await waiting([["sig-guarded", "sha-guarded"]], "ci_finished");
    const forged = await signal(checkSuite("sha-guarded"), "gh-forged", "not the secret");
    expect(forged.status).toBe(401);
    const filtered = await signal(checkSuite("sha-guarded", "requested"), "gh-filtered");
    expect(await filtered.json()).toMatchObject({ ignored: true });
    const keyless = await signal(JSON.stringify({ action: "completed", check_suite: { head_sha: { nested: "object" } } }), "gh-keyless");
    expect(keyless.status).toBe(400);
    const long = await signal(checkSuite("k".repeat(300)), "gh-long");
    expect(long.status).toBe(400);
    expect((await stub("sig-guarded").status())!.status).toBe("waiting");
    // The genuine one still works afterwards.
    expect(await (await signal(checkSuite("sha-guarded"), "gh-genuine")).json()).toEqual({ signal: "ci_finished", woken: 1 });
  });

  it("a redelivery of a signal the run already took does not unregister its next wait under the same key", async () => {
    const id = "sig-twice";
    await stub(id).start({ id, worker: "fn-waiter-twice", input: { event: "ci_finished", key: "sha-twice" }, approvalMode: "ask", budget: {} });
    expect((await settle(id)).status).toBe("waiting");
    const first = checkSuite("sha-twice");
    expect(await (await signal(first, "gh-twice-1")).json()).toEqual({ signal: "ci_finished", woken: 1 });
    // Woken, it waits again under the same key (and says so to the index).
    expect(await settle(id)).toMatchObject({ status: "waiting", waits: [{ kind: "event", name: "ci_finished", key: "sha-twice" }] });
    // The sender redelivers the first (a timeout on its side): a repeat for the run, which takes nothing.
    expect(await (await signal(first, "gh-twice-1")).json()).toEqual({ signal: "ci_finished", woken: 0 });
    const second = JSON.stringify({ action: "completed", check_suite: { head_sha: "sha-twice", conclusion: "failure" } });
    expect(await (await signal(second, "gh-twice-2")).json()).toEqual({ signal: "ci_finished", woken: 1 });
    expect(await settle(id)).toMatchObject({
      status: "succeeded",
      output: { second: { status: "received", payload: { check_suite: { conclusion: "failure" } } } },
    });
  });

  it("a forged correlation key cannot reach another key's runs: only the exact key's index object is asked", async () => {
    await waiting([["sig-exact", "abc"]], "ci_finished");
    for (const forged of ["ABC", "abc ", "ab", "abc\n", "%61bc"]) {
      expect(await (await signal(checkSuite(forged), `gh-forged-${encodeURIComponent(forged)}`)).json()).toEqual({ signal: "ci_finished", woken: 0 });
    }
    expect((await stub("sig-exact").status())!.status).toBe("waiting");
  });
});

describe("triggers.yaml: signal triggers", () => {
  const parse = (yaml: object) => parseTriggers("triggers.yaml", JSON.stringify(yaml), parseJson, catalog());
  const verify = { scheme: "github", secret_env: "GITHUB_WEBHOOK_SECRET" };

  it("a signal trigger needs an event name and a JSON pointer, and never a worker too", () => {
    expect(parse({ ok: { signal: { event: "ci_finished", key: "/sha" }, verify } }).problems).toEqual([]);
    expect(parse({ both: { signal: { event: "ci_finished", key: "/sha" }, worker: "triage", verify } }).problems.map((p) => p.message)).toEqual([
      "triggers.yaml: both: a trigger has worker (it starts a run) or signal (it wakes waiting runs), not both",
    ]);
    expect(
      parse({ bad: { signal: { event: "ci finished!", key: "sha" }, verify } })
        .problems.map((p) => p.field)
        .sort(),
    ).toEqual(["bad.signal.event", "bad.signal.key"]);
  });
});
