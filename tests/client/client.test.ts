import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  EdgeworkError,
  NotFoundError,
  PayloadTooLargeError,
  type Run,
  UnprocessableEntityError,
} from "../../src/client";
import { callTool, modelServer, say, waitForStatus } from "../../src/testing";
import { driveAlarm, effectCount, effectUrl, script, settle } from "../durable-objects/helpers";
import { appClient } from "./app-client";

const client = appClient();

/** The client's wait, while the test drives the run's alarms (the test pool sets them a minute ahead). */
async function waitDriven(id: string, until: Run["status"][]): Promise<Run> {
  const [run] = await Promise.all([client.runs.wait(id, { until, timeoutMs: 20_000 }), settle(id)]);
  return run;
}

describe("edgework/client against the app", () => {
  it("start → wait until awaiting_approval → approvals.list → decide → wait until succeeded; deciding twice → ConflictError", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("client-flow"), method: "POST" } }] }, { text: "done" }]);
    const started = await client.runs.start({ worker: "pause-writer", input: "post", budget: { maxTokens: 100_000 } });
    expect(started.status_url).toBe(`https://edgework.test/runs/${started.id}`);

    const paused = await waitDriven(started.id, ["awaiting_approval"]);
    expect(paused.status).toBe("awaiting_approval");
    const approvalId = paused.approvals[0]!.id;
    await vi.waitFor(async () => expect((await client.approvals.list()).approvals.map((a) => a.approval_id)).toContain(approvalId));
    const pending = (await client.approvals.list()).approvals.find((a) => a.approval_id === approvalId)!;
    expect(pending).toMatchObject({ run_id: started.id, worker: "pause-writer", tool: "fx_fetch", worker_chain: ["pause-writer"] });

    expect(await client.approvals.decide(started.id, approvalId, { decision: "approve", note: "by the client" })).toEqual({
      approval_id: approvalId,
      approved: true,
      status: "approved",
      edited: false,
    });
    const again = await client.approvals.decide(started.id, approvalId, { decision: "reject" }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ status: 409, body: { error: expect.any(String) } });

    const done = await waitDriven(started.id, ["succeeded"]);
    expect(done).toMatchObject({
      status: "succeeded",
      output: "done",
      approvals: [{ id: approvalId, status: "approved", decided_by: "api", note: "by the client" }],
    });
    expect(await effectCount("client-flow")).toBe(1);
    expect(await client.runs.get(started.id)).toMatchObject({ id: started.id, status: "succeeded" });
  });

  it("list pages through GET /runs with a small limit to the end; page() gets one page", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.runs.start({ worker: "index-a", input: `run ${i}` })).id);
    const listed = async () => {
      const pages = [];
      for await (const page of client.runs.list({ worker: "index-a", limit: 2 })) pages.push(page);
      return pages;
    };
    await vi.waitFor(async () => expect((await listed()).flatMap((p) => p.runs.map((r) => r.id))).toEqual(expect.arrayContaining(ids)));
    const pages = await listed();
    const seen = pages.flatMap((p) => p.runs.map((r) => r.id));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages.at(-1)!.next_cursor).toBeNull();
    expect(pages.slice(0, -1).every((p) => p.runs.length === 2 && p.next_cursor)).toBe(true);

    const first = await client.runs.page({ worker: "index-a", limit: 2 });
    expect(first.runs.map((r) => r.id)).toEqual(pages[0]!.runs.map((r) => r.id));
    const second = await client.runs.page({ worker: "index-a", limit: 2, cursor: first.next_cursor! });
    expect(second.runs.map((r) => r.id)).toEqual(pages[1]!.runs.map((r) => r.id));
    expect((await client.runs.page({ worker: "index-a", since: new Date(Date.now() + 60_000) })).runs).toEqual([]);
  });

  it("cancel a paused run; cancelling or resuming it again → ConflictError", async () => {
    // Set up as a user's test would (edgework/testing).
    const models = modelServer(env.FAKE_OPENAI_URL);
    await models.script("pause-writer", [callTool("fx_fetch", { url: models.effectUrl("client-cancel"), method: "POST" }), say("done")]);
    const { id } = await client.runs.start({ worker: "pause-writer", input: "post" });
    await waitForStatus(client, id, "awaiting_approval", { drive: driveAlarm });
    expect(await client.runs.cancel(id)).toEqual({ id, status: "cancelled" });
    expect((await client.runs.get(id)).status).toBe("cancelled");
    await expect(client.runs.cancel(id)).rejects.toBeInstanceOf(ConflictError);
    await expect(client.runs.resume(id)).rejects.toThrow(/POST \/runs\/.+\/resume → 409: the run was cancelled; there is nothing to resume/);
    expect(await models.countEffects("client-cancel")).toBe(0);
  });

  it("sendMessage continues a finished run's conversation; a second while it answers waits its turn; a cancelled run's → ConflictError", async () => {
    await script("chat-writer", [{ text: "first answer" }, { text: "second answer" }, { text: "third answer" }]);
    const { id } = await client.runs.start({ worker: "chat-writer", input: "hello" });
    await waitDriven(id, ["succeeded"]);
    expect(await client.runs.sendMessage(id, "and then?")).toEqual({ id, status: "running", message: 2 });
    expect(await client.runs.sendMessage(id, "and after that?")).toEqual({ id, status: "running", message: 3, waiting: true });
    const done = await waitDriven(id, ["succeeded"]);
    expect(done).toMatchObject({ status: "succeeded", output: "third answer" });
    expect(done.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "hello"],
      ["assistant", "first answer"],
      ["user", "and then?"],
      ["assistant", "second answer"],
      ["user", "and after that?"],
      ["assistant", "third answer"],
    ]);
    await expect(client.runs.sendMessage(id, "x".repeat(16_001))).rejects.toBeInstanceOf(PayloadTooLargeError);
    const other = await client.runs.start({ worker: "chat-writer", input: "hello" });
    await client.runs.cancel(other.id);
    await expect(client.runs.sendMessage(other.id, "too late")).rejects.toBeInstanceOf(ConflictError);
  });

  it("each error class from a real response, its message from the JSON body", async () => {
    const unknownRun = await client.runs.get("nope").catch((e: unknown) => e);
    expect(unknownRun).toBeInstanceOf(NotFoundError);
    expect(unknownRun).toBeInstanceOf(EdgeworkError);
    expect(unknownRun).toMatchObject({ name: "NotFoundError", status: 404, message: 'GET /runs/nope → 404: unknown run "nope"' });

    const badToken = await appClient({ apiToken: "wrong" })
      .workers.list()
      .catch((e: unknown) => e);
    expect(badToken).toBeInstanceOf(AuthenticationError);
    expect((badToken as AuthenticationError).headers?.get("www-authenticate")).toBe("Bearer");

    const badInput = await client.runs.start({ worker: "scoped", input: { text: 1 } }).catch((e: unknown) => e);
    expect(badInput).toBeInstanceOf(BadRequestError);
    expect((badInput as Error).message).toMatch(/input does not match the input schema of worker "scoped"/);

    const badMode = await client.runs.start({ worker: "scoped", input: "x", approvalMode: "sometimes" as never }).catch((e: unknown) => e);
    expect((badMode as Error).message).toMatch(/^POST \/runs → 400: invalid request body \(approval_mode: /);

    const unknownWorker = await client.runs.start({ worker: "ghost", input: "x" }).catch((e: unknown) => e);
    expect(unknownWorker).toBeInstanceOf(NotFoundError);
    expect((unknownWorker as NotFoundError).body).toMatchObject({ known: expect.arrayContaining(["scoped"]) });

    const huge = await client.runs.start({ worker: "scoped", input: "x".repeat(1024 * 1024 + 1) }).catch((e: unknown) => e);
    expect(huge).toBeInstanceOf(PayloadTooLargeError);
  });

  it("start with one idempotencyKey: the same params name the same run; other params → UnprocessableEntityError", async () => {
    await script("pause-writer", [{ text: "once" }]);
    const params = { worker: "pause-writer", input: "same", approvalMode: "approve_all" as const, idempotencyKey: "client-key-1" };
    const first = await client.runs.start(params);
    expect(await client.runs.start(params)).toEqual(first);
    const other = await client.runs.start({ ...params, input: "other" }).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(UnprocessableEntityError);
    expect((other as UnprocessableEntityError).status).toBe(422);
  });

  it("workers.list gives the catalog with each worker's input schema", async () => {
    const { workers } = await client.workers.list();
    expect(workers.find((w) => w.name === "scoped")).toMatchObject({
      parameters: { type: "object", required: ["input"] },
      file: "tests/fixtures/workers/scoped.worker",
    });
  });
});

describe("edgework/client: a run's journal and forks", () => {
  it("journal lists the steps; fork starts a run from one of them, carrying its origin; a key the run lacks → BadRequestError", async () => {
    await script("client-fork", [{ text: "first" }, { text: "second" }]);
    const { id } = await client.runs.start({ worker: "client-fork", input: "go" });
    expect(await waitDriven(id, ["succeeded"])).toMatchObject({ output: "first", forked_from: null });
    const page = await client.runs.journal(id, { limit: 10 });
    expect(page).toEqual({ steps: [expect.objectContaining({ seq: 1, key: "client-fork/turn:1/model", kind: "model" })], next: null });

    const forked = await client.runs.fork(id, { at: page.steps[0]!.key, definitions: "pinned" });
    expect(forked).toMatchObject({ forked_from: { run: id, at: "client-fork/turn:1/model" }, copied: { rows: 0, batches: 1 } });
    expect(await waitDriven(forked.id, ["succeeded"])).toMatchObject({ output: "second", forked_from: { run: id, at: "client-fork/turn:1/model" } });
    expect(await client.runs.fork(id, { at: "client-fork/turn:2/model" }).catch((e: unknown) => e)).toBeInstanceOf(BadRequestError);
  });

  it("evalCase is the run as an evals/ suite, YAML text; an unknown run → NotFoundError", async () => {
    await script("client-fork", [{ text: "first" }]);
    const { id } = await client.runs.start({ worker: "client-fork", input: "go" });
    await waitDriven(id, ["succeeded"]);
    const yaml = await client.runs.evalCase(id);
    expect(yaml).toMatch(new RegExp(`^# From run ${id} \\(succeeded\\)[\\s\\S]*\\nworker: client-fork\\n`));
    expect(await client.runs.evalCase("no-such-run").catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
  });
});
