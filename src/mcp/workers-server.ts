import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { RunView } from "../runs/types";
import { TERMINAL } from "../runs/types";
import { numberVar } from "../config";
import { catalog } from "../catalog";
import { workerToolDef } from "../engine/catalog/catalog";
import { checkStart, runView, startRun } from "../runs";
import { basePath } from "../http/base-path";
import { McpServer } from "./server";

const POLL_MS = 500;
const DEFAULT_WAIT_SECONDS = 60;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run in words and JSON, for a run that has not finished (yet): nothing is lost, it goes on. */
function inProgress(view: RunView, links: { run_url: string; status_url: string }, waited: number): CallToolResult {
  const open = view.approvals.filter((a) => a.status === "pending");
  const pending = open.map((a) => ({ id: a.id, tool: a.tool, worker_chain: a.worker_chain }));
  const state = { run_id: view.id, status: view.status, ...links, pending_approvals: pending };
  const approvals = open.filter((a) => a.kind === "approval").map((a) => a.tool);
  const questions = open.length - approvals.length;
  const run = `Run ${view.id} of worker "${view.worker}"`;
  const text = approvals.length
    ? `${run} is waiting for approval of ${approvals.join(", ")}. It continues once someone decides; follow it at ${links.run_url}.`
    : questions
      ? `${run} is waiting for a person to answer ${questions === 1 ? "a question" : `${questions} questions`}. It continues once answered (or expired); follow it at ${links.run_url}.`
      : `${run} is still ${view.status} after ${waited} s. It goes on; follow it at ${links.run_url}.`;
  return { content: [{ type: "text", text }], structuredContent: state };
}

function finished(view: RunView, links: { run_url: string; status_url: string }): CallToolResult {
  if (view.status === "succeeded") {
    const text = typeof view.output === "string" ? view.output : JSON.stringify(view.output);
    return { content: [{ type: "text", text }], structuredContent: { run_id: view.id, status: view.status, ...links, output: view.output } };
  }
  const reason = view.error ? `${view.error.code}: ${view.error.message}` : view.status;
  return {
    isError: true,
    content: [{ type: "text", text: `Run ${view.id} of worker "${view.worker}" ${view.status}: ${reason}` }],
    structuredContent: { run_id: view.id, status: view.status, ...links, error: view.error },
  };
}

/**
 * The catalog as an MCP server: every worker a tool (its description, its input
 * schema). A call starts a durable run like POST /runs and waits up to
 * MCP_WAIT_SECONDS for it, sending progress if the client asked for it.
 */
export function workersServer(env: Env, origin: string): McpServer {
  const server = new McpServer({ name: "edgework", version: "1" }, { tools: {} });
  const base = (env.PUBLIC_URL || origin).replace(/\/+$/, "") + basePath();
  const waitMs = numberVar(env, "MCP_WAIT_SECONDS", DEFAULT_WAIT_SECONDS) * 1000;

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...catalog().workers.values()].map((w) => {
      const def = workerToolDef(w);
      // The worker's input only, never the `attachments` parameter a calling worker gets:
      // an outside client holds no caller's files for a reference to name.
      return { name: def.name, description: def.description, inputSchema: w.input as { type: "object" } };
    }),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const checked = checkStart(req.params.name, req.params.arguments ?? {});
    if ("status" in checked) return { isError: true, content: [{ type: "text", text: checked.error }] };
    const id = crypto.randomUUID();
    const links = { run_url: `${base}/runs/${id}/view`, status_url: `${base}/runs/${id}` };
    await startRun(env, { id, worker: checked.worker.name, input: checked.input, approvalMode: "ask", budget: {}, trigger: { kind: "mcp" } });
    const token = req.params._meta?.progressToken;
    const started = Date.now();
    for (let tick = 1; ; tick++) {
      const view = (await runView(env, id))!;
      if (TERMINAL.includes(view.status)) return finished(view, links);
      const waited = Date.now() - started;
      if (view.status === "awaiting_approval" || view.status === "waiting" || waited >= waitMs || extra.signal.aborted)
        return inProgress(view, links, Math.round(waited / 1000));
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: tick, message: `run ${id}: ${view.status}` },
        });
      }
      await sleep(Math.min(POLL_MS, waitMs - waited));
    }
  });
  return server;
}
