import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/http/app";
import { effectUrl, script, settle, stub } from "../durable-objects/helpers";

const MCP_URL = "https://edgework.test/mcp";

/** The official SDK client, talking to the app in-process. */
async function connect(): Promise<Client> {
  const client = new Client({ name: "test", version: "1" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
    requestInit: { headers: { Authorization: `Bearer ${env.API_TOKEN}` } },
  });
  await client.connect(transport);
  return client;
}

/** Runs every due run alarm (the pool sets them a minute ahead) until `p` settles. */
async function driving<T>(p: Promise<T>): Promise<T> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    for (const id of await listDurableObjectIds(env.RUNS)) await runDurableObjectAlarm(env.RUNS.get(id));
    await new Promise((r) => setTimeout(r, 50));
  }
  return p;
}

type RunState = { run_id: string; status: string; run_url: string; output?: unknown; pending_approvals?: Array<{ id: string; tool: string }> };
const state = (r: unknown) => (r as CallToolResult).structuredContent as RunState;
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe("/mcp: the workers as an MCP server", () => {
  it("tools/list shows every catalog worker with its description and input schema", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === "hook-echo");
    expect(echo).toMatchObject({ description: "Fixture — a worker started by the fixture webhooks.", inputSchema: { type: "object", required: ["kind"] } });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["triage", "summarizer", "pause-writer", "mcp-writer"]));
    await client.close();
  });

  it("tools/list offers no attachments parameter: an outside client holds no caller's files", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const reader = tools.find((t) => t.name === "attach-reader")!;
    expect(Object.keys(reader.inputSchema.properties!)).toEqual(["input"]);
    await client.close();
  });

  it("a call to a worker that finishes returns its output, from a run started with trigger mcp", async () => {
    const client = await connect();
    const result = await driving(client.callTool({ name: "hook-echo", arguments: { kind: "ping" } }));
    expect(result.isError).toBeFalsy();
    expect(text(result)).toMatch(/^done: /);
    const s = state(result);
    expect(s).toMatchObject({ status: "succeeded", output: text(result), run_url: `https://edgework.test/runs/${s.run_id}/view` });
    expect(await stub(s.run_id).status()).toMatchObject({ trigger: { kind: "mcp" }, worker: "hook-echo" });
    await client.close();
  });

  it("a call that needs approval returns the pause (run id, page, tool); the run completes after the approval", async () => {
    await script("pause-writer", [
      { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("mcp-pause"), method: "POST", body: "hi" } }] },
      { text: "posted" },
    ]);
    const client = await connect();
    const result = await driving(client.callTool({ name: "pause-writer", arguments: { input: "post it" } }));
    const s = state(result);
    expect(result.isError).toBeFalsy();
    expect(s).toMatchObject({ status: "awaiting_approval", run_url: `https://edgework.test/runs/${s.run_id}/view`, pending_approvals: [{ tool: "fx_fetch" }] });
    expect(text(result)).toContain(`Run ${s.run_id} of worker "pause-writer" is waiting for approval of fx_fetch`);
    expect(text(result)).toContain(s.run_url);

    expect((await stub(s.run_id).decide(s.pending_approvals![0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
    expect(await settle(s.run_id)).toMatchObject({ status: "succeeded", output: "posted" });
    await client.close();
  });

  it("a call paused on a question returns `waiting` and says a person must answer (not approve)", async () => {
    await script("asker", [{ tool_calls: [{ id: "q", name: "people_ask", arguments: { question: "41 or 42?", to: "lead@example.com" } }] }, { text: "ok" }]);
    const client = await connect();
    const result = await driving(client.callTool({ name: "asker", arguments: { input: "go" } }));
    const s = state(result);
    expect(s).toMatchObject({ status: "waiting", pending_approvals: [{ tool: "ask_human" }] });
    expect(text(result)).toContain(`Run ${s.run_id} of worker "asker" is waiting for a person to answer a question.`);
    await client.close();
  });

  it("a run that outlasts the wait window: the result says so with its id, the run goes on; progress was reported", async () => {
    const client = await connect();
    const progress: string[] = [];
    // Nothing drives the alarm here: the run stays queued past MCP_WAIT_SECONDS.
    const result = await client.callTool({ name: "hook-echo", arguments: { kind: "slow" } }, undefined, { onprogress: (p) => progress.push(p.message ?? "") });
    const s = state(result);
    expect(s.status).toMatch(/^(queued|running)$/);
    expect(text(result)).toContain(`is still ${s.status} after`);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toBe(`run ${s.run_id}: ${s.status}`);
    expect(await settle(s.run_id)).toMatchObject({ status: "succeeded" });
    await client.close();
  });

  it("no or a wrong token → 401; API_TOKEN unset → 503", async () => {
    const init = {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    };
    expect((await exports.default.fetch(new Request(MCP_URL, init))).status).toBe(401);
    const wrong = { ...init, headers: { ...init.headers, authorization: "Bearer nope" } };
    expect((await exports.default.fetch(new Request(MCP_URL, wrong))).status).toBe(401);
    const closed = await app.fetch(new Request(MCP_URL, { ...init, headers: { ...init.headers, authorization: `Bearer ${env.API_TOKEN}` } }), {
      ...env,
      API_TOKEN: undefined,
    });
    expect(closed.status).toBe(503);
  });

  it("a request body over 1 MiB is refused with 413 before the MCP transport reads it", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: { input: "a".repeat(2 * 1024 * 1024) } } });
    const res = await exports.default.fetch(
      new Request(MCP_URL, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${env.API_TOKEN}` },
        body: big,
      }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: expect.stringContaining("1048576") });
  });
});
