import {
  EdgeworkClient,
  TERMINAL_STATUSES,
  type CallNode,
  type Decision,
  type Run,
  type RunStatus,
  type StartedRun,
  type StartRunParams,
  type ToolNode,
} from "../client";

/** Anything with the app's `fetch`: `exports.default` / `SELF` of cloudflare:workers / cloudflare:test, or the handler itself. */
export interface AppLike {
  fetch(request: Request): Response | Promise<Response>;
}

export interface TestClientOptions {
  /** The app's API_TOKEN in the test pool. */
  apiToken: string;
  /** Default `https://edgework.test`; add the mount path if the app is mounted under one. */
  baseURL?: string;
}

/** An EdgeworkClient whose requests go to `app` itself: no network, no retries. */
export function testClient(app: AppLike, options: TestClientOptions): EdgeworkClient {
  return new EdgeworkClient({
    baseURL: options.baseURL ?? "https://edgework.test",
    apiToken: options.apiToken,
    fetch: async (input, init) => app.fetch(new Request(input, init)),
    maxRetries: 0,
  });
}

/** `POST /runs`: the run's id and status URL (it runs on in its Durable Object). */
export function startRun(client: EdgeworkClient, params: StartRunParams): Promise<StartedRun> {
  return client.runs.start(params);
}

export interface WaitForStatusOptions {
  /** Default 20 000. */
  timeoutMs?: number;
  /**
   * Called between reads. In a pool that holds runs' alarms back (our own sets
   * EDGEWORK_TEST_HOOKS), fire the run's alarm here, e.g.
   * `(id) => runDurableObjectAlarm(env.RUNS.getByName(id))` from cloudflare:test.
   * Default: wait 50 ms (the run's alarms fire by themselves).
   */
  drive?: (runId: string) => Promise<unknown>;
}

/**
 * Reads `GET /runs/:id` until the run's status is one of `statuses`. A run that ends
 * in another status fails the wait at once, with its error: a test waiting for
 * `awaiting_approval` sees why the run failed instead of a timeout.
 */
export async function waitForStatus(
  client: EdgeworkClient,
  runId: string,
  statuses: RunStatus | readonly RunStatus[],
  options: WaitForStatusOptions = {},
): Promise<Run> {
  const wanted: readonly RunStatus[] = typeof statuses === "string" ? [statuses] : statuses;
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const drive = options.drive ?? (() => new Promise((r) => setTimeout(r, 50)));
  for (;;) {
    const run = await client.runs.get(runId);
    if (wanted.includes(run.status)) return run;
    const error = run.error ? ` (${run.error.code}: ${run.error.message})` : "";
    if (TERMINAL_STATUSES.includes(run.status)) throw new Error(`run ${runId} ended ${run.status}${error}; waited for ${wanted.join(" or ")}`);
    if (Date.now() > deadline)
      throw new Error(`run ${runId} is still ${run.status} after ${options.timeoutMs ?? 20_000} ms; waited for ${wanted.join(" or ")}`);
    await drive(runId);
  }
}

export interface DecideApprovalOptions {
  decision: "approve" | "reject";
  note?: string;
  /** Which approval; default: the run's only pending one (more than one is an error). */
  approvalId?: string;
}

/** Decides an approval of a run through the API, as a person with the API token would. */
export async function decideApproval(client: EdgeworkClient, runId: string, options: DecideApprovalOptions): Promise<Decision> {
  const approvalId = options.approvalId ?? onlyPending(await client.runs.get(runId));
  return client.approvals.decide(runId, approvalId, { decision: options.decision, ...(options.note !== undefined ? { note: options.note } : {}) });
}

function onlyPending(run: Run): string {
  const pending = run.approvals.filter((a) => a.status === "pending");
  if (pending.length !== 1)
    throw new Error(
      `run ${run.id} has ${pending.length} pending approvals (${pending.map((a) => `${a.id}: ${a.tool}`).join(", ") || "none"}): pass approvalId`,
    );
  return pending[0]!.id;
}

/** The run's call tree (`GET /runs/:id`): each worker's turns, usage and tool calls, nested. */
export async function callTree(client: EdgeworkClient, runId: string): Promise<CallNode> {
  const run = await client.runs.get(runId);
  if (!run.call_tree) throw new Error(`run ${runId} (${run.status}) has no call tree yet`);
  return run.call_tree;
}

/** Every tool call in a call tree, depth first (of one tool when `name` is given). */
export function toolCalls(tree: CallNode, name?: string): ToolNode[] {
  const all = tree.tools.flatMap((tool) => [tool, ...tool.calls.flatMap((child) => toolCalls(child))]);
  return name === undefined ? all : all.filter((t) => t.name === name);
}
