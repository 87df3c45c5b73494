import * as z from "zod";
import { hookAccepted } from "./hooks";
import { appIndex, json, problem, started } from "./common";
import { createScheduleBody, deletedSchedule, listSchedulesQuery, schedulePage, scheduleView, triggeredRun } from "./schedules";
import { dryRunView, operationBody, operationView } from "./operations";
import { approvalView, callNode, timeline, toolNode, waitView, runView } from "./run-view";
import {
  answerBody,
  answered,
  approvalsQuery,
  cancelledRun,
  decision,
  decisionBody,
  eventBody,
  forkBody,
  forkedRun,
  inboxQuery,
  journalPage,
  journalQuery,
  messageBody,
  pendingApprovals,
  resumedRun,
  runListItem,
  runPage,
  runsQuery,
  sentEvent,
  sentMessage,
  startBody,
} from "./runs";
import { workerList } from "./workers";

/**
 * Every route the app mounts (src/http/app.ts), as one table: method, path (Hono's, `:id`),
 * who may call it, its query, body and answers. The OpenAPI document (src/api/openapi.ts) is
 * made from it; tests/http/openapi.test.ts fails when the app and the table disagree.
 */

/** Who may call a route: the API token; a person (the API token, a session cookie, Cloudflare Access); an approval link's token; a webhook's signature; anyone. */
export type Auth = "token" | "person" | "link" | "signature" | "public";
/** An answer that is not JSON of a schema. */
export type Media = "html" | "sse" | "text" | "yaml" | "json" | "redirect";
export type Answer = z.ZodType | Media | ReadonlyArray<z.ZodType | Media>;

export interface Route {
  /** The operation's id (what a generated client names the call). */
  id: string;
  /** `all`: every method reaches the handler (MCP's transport answers each). */
  method: "get" | "post" | "delete" | "all";
  path: string;
  summary: string;
  auth: Auth;
  query?: z.ZodObject;
  /** A JSON body of this schema; `form`: an HTML form's fields; `json`: any JSON (checked by its own route). */
  body?: z.ZodType | "form" | "json";
  /** Request headers it reads. */
  headers?: readonly string[];
  ok: Partial<Record<200 | 201 | 202 | 303, Answer>>;
  /** Its refusals (JSON `problem` bodies; HTML pages for people), besides the token's 401 and 503. */
  errors: readonly number[];
}

/** Answers that are schemas: each is a component of the document, by this name. */
export const RESPONSES = {
  Index: appIndex,
  Problem: problem,
  Started: started,
  Run: runView,
  ApprovalView: approvalView,
  WaitView: waitView,
  CallNode: callNode,
  ToolNode: toolNode,
  Timeline: timeline,
  RunPage: runPage,
  RunListItem: runListItem,
  ForkedRun: forkedRun,
  JournalPage: journalPage,
  SentMessage: sentMessage,
  SentEvent: sentEvent,
  Decision: decision,
  Answered: answered,
  CancelledRun: cancelledRun,
  ResumedRun: resumedRun,
  PendingApprovals: pendingApprovals,
  EvalSuite: z.record(z.string(), z.unknown()),
  WorkerList: workerList,
  HookAccepted: hookAccepted,
  Operation: operationView,
  DryRun: dryRunView,
  Schedule: scheduleView,
  SchedulePage: schedulePage,
  TriggeredRun: triggeredRun,
  DeletedSchedule: deletedSchedule,
  Json: json,
} satisfies Record<string, z.ZodType>;

/** JSON bodies, as the routes validate them (their input side: defaults optional). */
export const REQUESTS = {
  StartRunBody: startBody,
  ForkBody: forkBody,
  MessageBody: messageBody,
  DecisionBody: decisionBody,
  AnswerBody: answerBody,
  EventBody: eventBody,
  OperationBody: operationBody,
  ScheduleBody: createScheduleBody,
  Json: json,
} satisfies Record<string, z.ZodType>;

const IDEMPOTENCY = ["Idempotency-Key"];
const LINK_PAGE = [400, 403, 404, 409, 410];
/** A run page's: an approval link's token for this run (from its page), else a person's credentials. */
const viewToken = z.object({ token: z.string().optional() });
/** The inbox's query: its filter (attr.<name> gathered as the listing's), and `attribute` (`name=value`) from its form. */
const inboxPage = inboxQuery.omit({ attributes: true }).extend({ attribute: z.string().optional() });

/**
 * One route: its operation id, `"<method> <path>"`, who may call it, a summary, its answers by
 * status, its refusals, and what it reads (query, body, headers).
 */
function route(
  id: string,
  at: string,
  auth: Auth,
  summary: string,
  ok: Route["ok"],
  errors: readonly number[] = [],
  reads: Pick<Route, "query" | "body" | "headers"> = {},
): Route {
  const [method, path] = at.split(" ") as [Route["method"], string];
  return { id, method, path, auth, summary, ok, errors, ...reads };
}

/** Slack signs every request it sends (docs/security.md, "Slack"). */
const SLACK_SIGNED = ["X-Slack-Signature", "X-Slack-Request-Timestamp"] as const;

export const ROUTES: readonly Route[] = [
  route("index", "get /", "public", "The app's index", { 200: appIndex }),
  route("openapi", "get /openapi.json", "public", "This document", { 200: "json" }),
  route("deliverHook", "post /hooks/:name", "signature", "A signed webhook delivery", { 202: hookAccepted }, [400, 401, 404, 409, 413, 429, 503], {
    body: "json",
  }),

  route(
    "slackInteractions",
    "post /slack/interactions",
    "signature",
    "A Slack button press or modal submission (Slack's v0 signature)",
    { 200: ["json", "text"] },
    [400, 401, 403, 404, 409, 410, 413, 502, 503],
    {
      body: "form",
      headers: SLACK_SIGNED,
    },
  ),
  route(
    "slackCommand",
    "post /slack/commands",
    "signature",
    "A Slack slash command: starts the slack trigger's run",
    { 200: "json" },
    [400, 401, 403, 404, 413, 503],
    {
      body: "form",
      headers: SLACK_SIGNED,
    },
  ),
  route(
    "slackEvents",
    "post /slack/events",
    "signature",
    "Slack's Events API: a reply in a run's thread continues it",
    { 200: ["json", "text"] },
    [400, 401, 413, 503],
    {
      body: "json",
      headers: SLACK_SIGNED,
    },
  ),

  route("listRuns", "get /runs", "token", "List runs; attr.<name>=<value> filters", { 200: runPage }, [400], {
    query: runsQuery.omit({ attributes: true }),
  }),
  route("listApprovals", "get /approvals", "token", "List pending approvals", { 200: pendingApprovals }, [400], { query: approvalsQuery }),
  route("startRun", "post /runs", "token", "Start a run", { 200: started, 202: started }, [400, 404, 413, 422], { body: startBody, headers: IDEMPOTENCY }),
  route("getRun", "get /runs/:id", "token", "Get a run", { 200: runView }, [404]),
  route("getEvalCase", "get /runs/:id/eval-case", "token", "A run as an eval case", { 200: ["yaml", RESPONSES.EvalSuite] }, [404], {
    query: z.object({ format: z.literal("json").optional() }),
  }),
  route("runEvents", "get /runs/:id/events", "token", "Follow a run's events", { 200: "sse" }, [404], {
    query: z.object({ after: z.string().optional(), deltas: z.literal("1").optional() }),
    headers: ["Last-Event-ID"],
  }),
  route("getCreatedWorker", "get /runs/:id/workers/:name", "token", "A worker a run created", { 200: "text" }, [404]),
  route("getJournal", "get /runs/:id/journal", "token", "A run's journal", { 200: journalPage }, [400, 404], { query: journalQuery }),
  route("forkRun", "post /runs/:id/fork", "token", "Fork a run at a step", { 202: forkedRun }, [400, 404, 409], { body: forkBody }),
  route("decideApproval", "post /runs/:id/approvals/:approvalId", "token", "Decide an approval", { 200: decision }, [400, 403, 404, 409, 410], {
    body: decisionBody,
  }),
  route("answerQuestion", "post /runs/:id/questions/:questionId", "token", "Answer a question", { 200: answered }, [400, 403, 404, 409, 410], {
    body: answerBody,
  }),
  route("cancelRun", "post /runs/:id/cancel", "token", "Cancel a run", { 200: cancelledRun }, [404, 409]),
  route("sendMessage", "post /runs/:id/messages", "token", "Send a message", { 202: sentMessage }, [400, 404, 409, 413], { body: messageBody }),
  route("resumeRun", "post /runs/:id/resume", "token", "Resume a run", { 200: resumedRun }, [404, 409]),
  route("sendEvent", "post /runs/:id/events/:name", "token", "Send an event", { 202: sentEvent }, [400, 404, 409, 413], { body: eventBody }),
  route("listWorkers", "get /workers", "token", "List workers", { 200: workerList }),

  route("startOperation", "post /operations", "token", "Start a bulk operation", { 200: [started, dryRunView], 202: started }, [400, 409, 422], {
    body: operationBody,
    headers: IDEMPOTENCY,
  }),
  route("getOperation", "get /operations/:id", "token", "Get an operation", { 200: operationView }, [404]),
  route("cancelOperation", "post /operations/:id/cancel", "token", "Cancel an operation", { 200: operationView }, [404]),

  route("createSchedule", "post /schedules", "token", "Create a schedule", { 200: scheduleView, 201: scheduleView }, [400, 409], { body: createScheduleBody }),
  route("listSchedules", "get /schedules", "token", "List schedules", { 200: schedulePage }, [400], { query: listSchedulesQuery }),
  route("getSchedule", "get /schedules/:id", "token", "Get a schedule", { 200: scheduleView }, [404]),
  route("pauseSchedule", "post /schedules/:id/pause", "token", "Pause a schedule", { 200: scheduleView }, [404, 409]),
  route("resumeSchedule", "post /schedules/:id/resume", "token", "Resume a schedule", { 200: scheduleView }, [404, 409]),
  route("triggerSchedule", "post /schedules/:id/trigger", "token", "Trigger a schedule now", { 202: triggeredRun }, [404, 409]),
  route("deleteSchedule", "delete /schedules/:id", "token", "Delete a schedule", { 200: deletedSchedule }, [404, 409]),

  route("mcp", "all /mcp", "token", "MCP server", { 200: ["json", "sse"], 202: "json" }, [400, 405, 406], { body: "json" }),

  route("approvalPage", "get /approvals/:token", "link", "Approval page", { 200: "html" }, LINK_PAGE, {
    query: z.object({ intent: z.string().optional() }),
  }),
  route("decideByLink", "post /approvals/:token", "link", "Decide on the approval page", { 200: "html" }, LINK_PAGE, { body: "form" }),
  route("runPage", "get /runs/:id/view", "person", "A run's page", { 200: "html" }, [403, 404], { query: viewToken }),
  route("runPageEvents", "get /runs/:id/view/events", "person", "A run page's events", { 200: "sse" }, [403], { query: viewToken }),
  route("loginPage", "get /login", "public", "Sign-in form", { 200: "html" }, [503], { query: z.object({ next: z.string().optional() }) }),
  route("login", "post /login", "public", "Sign in", { 303: "redirect" }, [401, 403, 503], { body: "form" }),
  route("logout", "post /logout", "person", "Sign out", { 303: "redirect" }, [403], { body: "form" }),
  route("inbox", "get /inbox", "person", "The inbox", { 200: "html" }, [400], { query: inboxPage }),
];
