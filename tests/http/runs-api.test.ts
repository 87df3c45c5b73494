import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/http/app";
import { callTool, modelServer, say, startRun, testClient, waitForStatus } from "../../src/testing";
import { driveAlarm, effectCount, effectUrl, modelRequests, script, settle } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));
const post = (path: string, body: unknown, headers: Record<string, string> = auth) =>
  call(path, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

// Runs paused for approval, set up as a user's test would (edgework/testing).
const client = testClient(exports.default, { apiToken: "test-token" });
const models = modelServer(env.FAKE_OPENAI_URL);

async function pausedRun(): Promise<{ id: string; approvalId: string }> {
  await models.script("pause-writer", [callTool("fx_fetch", { url: models.effectUrl("api"), method: "POST" }), say("done")]);
  const { id } = await startRun(client, { worker: "pause-writer", input: "post" });
  const paused = await waitForStatus(client, id, "awaiting_approval", { drive: driveAlarm });
  return { id, approvalId: paused.approvals[0]!.id };
}

describe("run API", () => {
  it("POST /runs answers 202 with the id and status URL; the run completes in its Durable Object", async () => {
    const res = await post("/runs", { worker: "scoped", input: { input: "count" } });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { id: string; status_url: string };
    expect(body.status_url).toBe(`https://edgework.test/runs/${body.id}`);
    await settle(body.id);
    const status = await call(`/runs/${body.id}`, { headers: auth });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ id: body.id, worker: "scoped", status: "succeeded", usage: { requests: 4 }, call_tree: { worker: "scoped" } });
  });

  it("GET /workers lists the catalog with each worker's tool schema", async () => {
    const res = await call("/workers", { headers: auth });
    const { workers } = (await res.json()) as { workers: Array<{ name: string; parameters: unknown; description: string }> };
    expect(workers.find((w) => w.name === "scoped")).toMatchObject({
      description: "Fixture — counters in run and global scope, and a child sharing the run's.",
      parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
    });
  });

  it("GET /workers shows a worker's tool exactly as a calling model is offered it, attachments parameter and policy included", async () => {
    const { workers } = (await (await call("/workers", { headers: auth })).json()) as {
      workers: Array<{ name: string; description: string; parameters: any; attachments: unknown }>;
    };
    const listed = workers.find((w) => w.name === "attach-reader")!;
    expect(listed.attachments).toEqual({ max_files: 3, max_bytes: 200000, types: ["image/*", "text/*"] });
    expect(listed.parameters.properties.attachments).toMatchObject({ type: "array", maxItems: 3 });
    expect(workers.find((w) => w.name === "scoped")!.attachments).toBeNull();
    // What the calling worker's model was sent, captured at the fake OpenAI server.
    await script("attach-desk", [{ text: "done" }]);
    const res = await post("/runs", { worker: "attach-desk", input: "go" });
    await settle(((await res.json()) as { id: string }).id);
    const sent = ((await modelRequests("attach-desk")).at(-1) as { tools: Array<{ function: { name: string; description: string; parameters: unknown } }> })
      .tools;
    const offered = sent.find((t) => t.function.name === "attach-reader")!.function;
    expect({ name: listed.name, description: listed.description, parameters: listed.parameters }).toEqual(offered);
  });

  it("no token → 401; wrong token → 401", async () => {
    for (const headers of [{}, { Authorization: "Bearer nope" }, { Authorization: "Basic dGVzdC10b2tlbg==" }] as Array<Record<string, string>>) {
      const res = await post("/runs", { worker: "scoped", input: "x" }, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
      expect(await res.json()).toEqual({ error: "missing or wrong API token: send Authorization: Bearer <API_TOKEN>" });
    }
    expect((await call("/runs/x", {})).status).toBe(401);
    expect((await call("/workers", {})).status).toBe(401);
  });

  it("API_TOKEN unset → every protected route answers 503 naming the secret, never open", async () => {
    const closed = { ...env, API_TOKEN: undefined };
    for (const [method, path] of [
      ["POST", "/runs"],
      ["GET", "/runs/abc"],
      ["GET", "/runs/abc/events"],
      ["POST", "/runs/abc/cancel"],
      ["POST", "/runs/abc/approvals/x"],
      ["GET", "/workers"],
    ] as const) {
      const res = await app.fetch(new Request(`https://edgework.test${path}`, { method, headers: auth }), closed);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(((await res.json()) as { error: string }).error).toMatch(/^API_TOKEN is not set/);
    }
  });

  it("malformed JSON → 400; a bad shape → 400 listing what is wrong", async () => {
    const bad = await post("/runs", "{nope");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "the request body is not valid JSON" });
    const shape = await post("/runs", { worker: 7, approval_mode: "sometimes", extra: true });
    expect(shape.status).toBe(400);
    const body = (await shape.json()) as { issues: Array<{ path: string }> };
    expect(body.issues.map((i) => i.path).sort()).toEqual(["(root)", "approval_mode", "input", "worker"]);
  });

  it("unknown worker → 404 listing the known ones; input not matching the schema → 400", async () => {
    const unknown = await post("/runs", { worker: "ghost", input: "x" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'unknown worker "ghost"', known: expect.arrayContaining(["scoped", "pause-writer", "notes"]) });
    const mismatch = await post("/runs", { worker: "scoped", input: { text: 1 } });
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: string }).error).toMatch(
      /^input does not match the input schema of worker "scoped" \(tests\/fixtures\/workers\/scoped\.worker\): input: required; text: not allowed$/,
    );
  });

  it("unknown run → 404 on every run route", async () => {
    for (const [method, path] of [
      ["GET", "/runs/nope"],
      ["GET", "/runs/nope/events"],
      ["POST", "/runs/nope/cancel"],
      ["GET", "/runs/bad%20id"],
    ] as const) {
      const res = await call(path, { method, headers: auth });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await post("/runs/nope/approvals/ap_x", { decision: "approve" })).status).toBe(404);
  });

  it("deciding by API: approve → 200; deciding twice → 409; bad decision → 400", async () => {
    const { id, approvalId } = await pausedRun();
    expect((await post(`/runs/${id}/approvals/${approvalId}`, { decision: "maybe" })).status).toBe(400);
    const ok = await post(`/runs/${id}/approvals/${approvalId}`, { decision: "approve", note: "fine" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ approval_id: approvalId, approved: true, status: "approved", edited: false });
    const again = await post(`/runs/${id}/approvals/${approvalId}`, { decision: "reject" });
    expect(again.status).toBe(409);
    expect(await settle(id)).toMatchObject({ status: "succeeded", approvals: [{ decided_by: "api", note: "fine" }] });
  });

  it("deciding on a cancelled run → 409", async () => {
    const { id, approvalId } = await pausedRun();
    const cancel = await post(`/runs/${id}/cancel`, {});
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ id, status: "cancelled" });
    const decide = await post(`/runs/${id}/approvals/${approvalId}`, { decision: "approve" });
    expect(decide.status).toBe(409);
    expect(await decide.json()).toEqual({ error: "the run was cancelled; its approvals are void" });
    expect((await post(`/runs/${id}/cancel`, {})).status).toBe(409);
  });
});

describe("POST /runs/:id/resume", () => {
  const object = (id: string) => env.RUNS.getByName(id);
  const sql = (id: string, query: string) => runInDurableObject(object(id), (_o, state) => void state.storage.sql.exec(query));
  const alarmOf = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());

  async function pausedResumeRun(tag: string) {
    await models.script("resume-writer", [callTool("fx_fetch", { url: models.effectUrl(tag), method: "POST" }), say("resumed")]);
    const { id } = await startRun(client, { worker: "resume-writer", input: "post" });
    const paused = await waitForStatus(client, id, "awaiting_approval", { drive: driveAlarm });
    return { id, approvalId: paused.approvals[0]!.id };
  }

  it("a queued run that lost its alarm is re-armed and completes; unknown → 404; without the token → 401", async () => {
    await script("resume-writer", [{ text: "resumed" }]);
    const { id } = (await (await post("/runs", { worker: "resume-writer", input: "x" })).json()) as { id: string };
    await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
    expect(await alarmOf(id)).toBeNull();
    const res = await post(`/runs/${id}/resume`, {});
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, status: "queued", resumed: true });
    expect(await alarmOf(id)).not.toBeNull();
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "resumed" });
    expect((await post("/runs/nope/resume", {})).status).toBe(404);
    expect((await post(`/runs/${id}/resume`, {}, {})).status).toBe(401);
  });

  it("a paused run whose decision's wake-up was lost is re-armed; one waiting for a human → 409; an ended one → 409", async () => {
    const { id, approvalId } = await pausedResumeRun("resume-lost");
    const waiting = await post(`/runs/${id}/resume`, {});
    expect(waiting.status).toBe(409);
    expect(((await waiting.json()) as { error: string }).error).toMatch(
      /^the run waits for a human to decide; its earliest pending approval expires at \d{4}-/,
    );

    expect((await post(`/runs/${id}/approvals/${approvalId}`, { decision: "approve" })).status).toBe(200);
    // As if the wake-up after the decision was lost: paused again, no alarm.
    // (A live run's status is its newest lifecycle event: see RUN_CURRENT in durable-objects/schema.ts.)
    await sql(id, "UPDATE run SET status = 'awaiting_approval'");
    await sql(id, "INSERT INTO events (after_step, type, data, at) VALUES ((SELECT coalesce(max(seq), 0) FROM journal), 'run_awaiting_approval', '{}', 0)");
    await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
    const res = await post(`/runs/${id}/resume`, {});
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, status: "awaiting_approval", resumed: true });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "resumed" });
    expect(await effectCount("resume-lost")).toBe(1);

    const ended = await post(`/runs/${id}/resume`, {});
    expect(ended.status).toBe(409);
    expect(await ended.json()).toEqual({ error: "the run already succeeded; there is nothing to resume" });
  });

  it("a paused run whose approval expired without a wake-up is re-armed; the alarm records the rejection", async () => {
    const { id } = await pausedResumeRun("resume-expired");
    await sql(id, "UPDATE approvals SET expires_at = 1");
    await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
    expect((await post(`/runs/${id}/resume`, {})).status).toBe(200);
    expect(await settle(id)).toMatchObject({ status: "succeeded", approvals: [{ status: "expired", decided_by: "expiry" }] });
    expect(await effectCount("resume-expired")).toBe(0);
  });

  it("deciding an approval of a run that failed → 409 naming how it ended", async () => {
    const { id, approvalId } = await pausedResumeRun("resume-failed");
    await sql(id, "UPDATE run SET status = 'failed'");
    const decide = await post(`/runs/${id}/approvals/${approvalId}`, { decision: "approve" });
    expect(decide.status).toBe(409);
    expect(await decide.json()).toEqual({ error: "the run already failed; its approvals are void" });
  });
});

/** Reads SSE events from a response until `stop` says so. */
async function readEvents(res: Response, stop: (e: { id: string; event: string; data: any }) => boolean) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Array<{ id: string; event: string; data: any }> = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let i: number;
    while ((i = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const field = (name: string) =>
        block
          .split("\n")
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? "";
      const e = { id: field("id"), event: field("event"), data: JSON.parse(field("data") || "null") };
      events.push(e);
      if (stop(e)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

describe("run events (SSE)", () => {
  it("streams a run's events as they happen, and a reconnect with Last-Event-ID gets only the missed ones", async () => {
    await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("sse"), method: "POST" } }] }, { text: "streamed" }]);
    const { id } = (await (await post("/runs", { worker: "pause-writer", input: "go" })).json()) as { id: string };
    const stream = await call(`/runs/${id}/events`, { headers: auth });
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);

    // Events arrive while the run is driven: nothing has happened yet but queueing.
    const live = readEvents(stream, (e) => e.event === "approval_requested");
    await settle(id);
    const first = await live;
    expect(first.map((e) => e.event)).toEqual(["run_queued", "run_running", "call", "turn", "approval_requested"]);
    expect(first[3]!.data).toMatchObject({ path: "pause-writer", turn: 1, tool_calls: [{ name: "fx_fetch" }] });

    const approvalId = first[4]!.data.approval_id as string;
    await post(`/runs/${id}/approvals/${approvalId}`, { decision: "approve" });
    await settle(id);
    const rest = await readEvents(await call(`/runs/${id}/events`, { headers: { ...auth, "Last-Event-ID": first.at(-1)!.id } }), () => false);
    // The first reader stopped at approval_requested: the notification step and the pause came right after it.
    expect(rest.map((e) => e.event)).toEqual([
      "approval_emailed",
      "approval_notified",
      "run_awaiting_approval",
      "approval_decided",
      "approval_recorded",
      "tool",
      "turn",
      "run_succeeded",
      "end", // the run has ended and every event is out
    ]);
    expect(rest[0]!.data).toMatchObject({ approval_id: approvalId, to: "approver@example.com" });
    expect(rest[1]!.data).toMatchObject({ path: "pause-writer/turn:1/tool:1", emailed: true, to: "approver@example.com" });
    expect(rest.at(-3)!.data).toMatchObject({ turn: 2, text: "streamed" });
    expect(rest.at(-1)).toEqual({ id: "", event: "end", data: {} });
    // Every event has an id of its own (an event inside a step's several: the cursor before the step and how many it has seen).
    const ids = rest.slice(0, -1).map((e) => e.id);
    expect(ids.every((id) => /^\d+-\d+(-\d+)?$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);

    // From the start, the whole run; ids increase and every event comes once.
    const all = await readEvents(await call(`/runs/${id}/events`, { headers: auth }), () => false);
    expect(all.map((e) => e.event)).toEqual([...first.map((e) => e.event), ...rest.map((e) => e.event)]);
  });
});
