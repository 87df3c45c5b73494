import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/client";
import {
  answerQuestion,
  callTool,
  callTree,
  decideApproval,
  modelServer,
  say,
  startRun,
  testClient,
  toolCalls,
  waitForStatus,
  waitForWait,
} from "../../src/testing";
import { driveAlarm } from "../durable-objects/helpers";

// What a user's test does, through the public HTTP API only (docs/testing.md).
const client = testClient(exports.default, { apiToken: env.API_TOKEN! });
const models = modelServer(env.FAKE_OPENAI_URL);
const drive = { drive: driveAlarm };

describe("edgework/testing", () => {
  it("scripted model → startRun → waitForStatus(awaiting_approval) → decideApproval → succeeded; callTree, toolCalls and countEffects show what ran", async () => {
    await models.script("pause-writer", [callTool("fx_fetch", { url: models.effectUrl("testing-flow"), method: "POST" }), say("posted")]);
    const { id } = await startRun(client, { worker: "pause-writer", input: "post it" });
    const paused = await waitForStatus(client, id, "awaiting_approval", drive);
    expect(paused.approvals).toMatchObject([{ status: "pending", tool: "fx_fetch" }]);
    expect(await models.countEffects("testing-flow")).toBe(0);

    expect(await decideApproval(client, id, { decision: "approve", note: "ok" })).toEqual({
      approval_id: paused.approvals[0]!.id,
      approved: true,
      status: "approved",
      edited: false,
    });
    const done = await waitForStatus(client, id, ["succeeded"], drive);
    expect(done).toMatchObject({ output: "posted", approvals: [{ status: "approved", decided_by: "api", note: "ok" }] });
    expect(await models.countEffects("testing-flow")).toBe(1);

    const tree = await callTree(client, id);
    expect(tree).toMatchObject({ worker: "pause-writer", turns: 2 });
    expect(toolCalls(tree).map((t) => [t.name, t.status])).toEqual([["fx_fetch", "ok"]]);
    const [first] = (await models.requests("pause-writer")) as Array<{ messages: Array<{ role: string; content: string }> }>;
    expect(first!.messages.at(-1)).toMatchObject({ role: "user", content: "post it" });
    // A second decision is refused as the API refuses it.
    expect(await decideApproval(client, id, { decision: "reject", approvalId: paused.approvals[0]!.id }).catch((e: unknown) => e)).toBeInstanceOf(
      ConflictError,
    );
  });

  it("toolCalls reaches into the workers a worker called, and filters by name", async () => {
    await models.script("dispatch-lead", [callTool("dispatch-helper", { input: "go" }), say("lead done")]);
    await models.script("dispatch-helper", [callTool("fx_fetch", { url: models.effectUrl("testing-nested"), method: "POST" }), say("helped")]);
    const { id } = await startRun(client, { worker: "dispatch-lead", input: "go" });
    await waitForStatus(client, id, "succeeded", drive);
    const tree = await callTree(client, id);
    expect(toolCalls(tree).map((t) => t.name)).toEqual(["dispatch-helper", "fx_fetch"]);
    expect(toolCalls(tree, "fx_fetch")).toMatchObject([{ status: "ok", path: expect.stringContaining("dispatch-helper") }]);
    expect(await models.countEffects("testing-nested")).toBe(1);
  });

  it("waitForStatus fails at once, with the run's error, when the run ends otherwise; decideApproval without one pending approval names the count", async () => {
    await models.script("pause-writer", [{ status: 400, body: { error: { message: "scripted refusal" } } }]);
    const { id } = await startRun(client, { worker: "pause-writer", input: "x" });
    const waited = await waitForStatus(client, id, "awaiting_approval", { ...drive, timeoutMs: 60_000 }).then(
      () => new Error("no error"),
      (e: unknown) => e as Error,
    );
    expect(waited.message).toMatch(new RegExp(`^run ${id} ended failed \\(\\w+: .*\\); waited for awaiting_approval$`));
    await expect(decideApproval(client, id, { decision: "approve" })).rejects.toThrow(`run ${id} has 0 pending approvals (none): pass approvalId`);
    await expect(callTree(client, "nope")).rejects.toThrow(/not found|404/i);
  });

  it("waitForStatus gives up after timeoutMs naming the status it saw", async () => {
    await models.script("pause-writer", [say("never read")]);
    const { id } = await startRun(client, { worker: "pause-writer", input: "x" });
    // No drive: this pool holds the run's alarm a minute back, so it stays queued.
    await expect(waitForStatus(client, id, "succeeded", { timeoutMs: 200 })).rejects.toThrow(`run ${id} is still queued after 200 ms; waited for succeeded`);
    await waitForStatus(client, id, "succeeded", drive);
  });

  it("waitForWait finds the wait meant; answerQuestion answers the only open question; decideApproval counts no question", async () => {
    const { id } = await startRun(client, { worker: "fn-questioner", input: { url: models.effectUrl("testing-question") } });
    const { run, wait } = await waitForWait(client, id, { kind: "question" }, drive);
    expect(run.status).toBe("waiting");
    expect(wait).toMatchObject({ kind: "question", name: run.approvals[0]!.id });
    await expect(waitForWait(client, id, { kind: "event" }, { ...drive, timeoutMs: 100 })).rejects.toThrow(
      `run ${id} is still waiting after 100 ms; waited for an event wait`,
    );
    await expect(decideApproval(client, id, { decision: "approve" })).rejects.toThrow(`run ${id} has 0 pending approvals (none): pass approvalId`);
    expect(await answerQuestion(client, id, { answer: "42" })).toMatchObject({ answered: true });
    expect(await waitForStatus(client, id, "succeeded", drive)).toMatchObject({ output: { got: { answered: true, answer: "42" } } });
    await expect(answerQuestion(client, id, { answer: "again" })).rejects.toThrow(`run ${id} has 0 pending questions (none): pass questionId`);
    expect(await models.countEffects("testing-question")).toBe(1);
  });
});
