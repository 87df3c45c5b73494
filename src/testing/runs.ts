import {
  EdgeworkClient,
  TERMINAL_STATUSES,
  type Answered,
  type CallNode,
  type DecideParams,
  type Decision,
  type Run,
  type RunStatus,
  type StartedRun,
  type StartRunParams,
  type ToolNode,
  type WaitView,
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
  return pollRun(client, runId, wanted.join(" or "), (run) => (wanted.includes(run.status) ? run : undefined), options);
}

/**
 * Reads `GET /runs/:id` until the run waits for a `kind` (a sleep, an event, a question;
 * of that `name` too, when given): `waitForStatus(…, "waiting")` returns at the first
 * pause, which may be another wait. Fails at once if the run ends first.
 */
export function waitForWait(
  client: EdgeworkClient,
  runId: string,
  wanted: { kind: WaitView["kind"]; name?: string },
  options: WaitForStatusOptions = {},
): Promise<{ run: Run; wait: WaitView }> {
  const named = wanted.name === undefined ? "" : ` "${wanted.name}"`;
  return pollRun(
    client,
    runId,
    `${wanted.kind === "event" ? "an" : "a"} ${wanted.kind}${named} wait`,
    (run) => {
      const wait = run.waits.find((w) => w.kind === wanted.kind && (wanted.name === undefined || w.name === wanted.name));
      return wait ? { run, wait } : undefined;
    },
    options,
  );
}

/** The run as `found` sees it, read until it says yes, the run ends, or the time is up (each failure names what it waited for). */
async function pollRun<T>(client: EdgeworkClient, runId: string, what: string, found: (run: Run) => T | undefined, options: WaitForStatusOptions): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const drive = options.drive ?? (() => new Promise((r) => setTimeout(r, 50)));
  for (;;) {
    const run = await client.runs.get(runId);
    const hit = found(run);
    if (hit !== undefined) return hit;
    const error = run.error ? ` (${run.error.code}: ${run.error.message})` : "";
    if (TERMINAL_STATUSES.includes(run.status)) throw new Error(`run ${runId} ended ${run.status}${error}; waited for ${what}`);
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run.status} after ${options.timeoutMs ?? 20_000} ms; waited for ${what}`);
    await drive(runId);
  }
}

/** A decision as the client takes it (approve, with edited `arguments`; reject; respond with a `result`), and which approval. */
export type DecideApprovalOptions = DecideParams & {
  /** Which approval; default: the run's only pending one (more than one is an error). */
  approvalId?: string;
};

/** Decides an approval of a run through the API, as a person with the API token would. */
export async function decideApproval(client: EdgeworkClient, runId: string, options: DecideApprovalOptions): Promise<Decision> {
  const { approvalId: chosen, ...params } = options;
  const approvalId = chosen ?? onlyPending(await client.runs.get(runId), "approval");
  return client.approvals.decide(runId, approvalId, params);
}

export interface AnswerQuestionOptions {
  answer: string;
  /** Which question; default: the run's only open one (more than one is an error). */
  questionId?: string;
}

/** Answers a question to a person (`ctx.askHuman`, the `human` kind) through the API, as a person with the API token would. */
export async function answerQuestion(client: EdgeworkClient, runId: string, options: AnswerQuestionOptions): Promise<Answered> {
  const questionId = options.questionId ?? onlyPending(await client.runs.get(runId), "question");
  return client.approvals.answer(runId, questionId, options.answer);
}

function onlyPending(run: Run, kind: "approval" | "question"): string {
  const pending = run.approvals.filter((a) => a.status === "pending" && a.kind === kind);
  const id = kind === "approval" ? "approvalId" : "questionId";
  if (pending.length !== 1)
    throw new Error(`run ${run.id} has ${pending.length} pending ${kind}s (${pending.map((a) => `${a.id}: ${a.tool}`).join(", ") || "none"}): pass ${id}`);
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
