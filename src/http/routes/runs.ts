import { Hono } from "hono/tiny";
import type * as z from "zod";
import {
  answerBody,
  type answered,
  type cancelledRun,
  type decision,
  decisionBody,
  eventBody,
  forkBody,
  type forkedRun,
  journalQuery,
  type journalPage,
  messageBody,
  type resumedRun,
  type sentEvent,
  type sentMessage,
  startBody,
  type startedRun,
} from "../../api/runs";
import type { runView } from "../../api/run-view";
import { budgetOf } from "../../engine/catalog/worker-file";
import { evalSuiteOf, evalSuiteYaml } from "../../evals/from-run";
import { checkStart, missingRun, RUN_ID, runStub, startRun } from "../../runs";
import { claimRun, idempotencyKeyOf } from "../../runs/idempotency";
import { httpError, issueList } from "../http-error";
import { checkEvent } from "../../runs/events";
import { runEventStream } from "../run-event-stream";
import { jsonBody } from "../validate";
import { appPath } from "../base-path";
import { accessIdentity } from "../middleware/people-auth";
import { runNotify } from "../../notify/run-notify";

export const runs = new Hono<{ Bindings: Env }>();

/**
 * Starts a run: 202. With an `Idempotency-Key`, the same key and body within 24 h name
 * the same run (200, `Idempotent-Replayed: true`); the key with another body is a 422.
 * A refused request (4xx) binds no key.
 */
runs.post("/", async (c) => {
  const body = await jsonBody(c, startBody);
  const key = idempotencyKeyOf(c.req.header("Idempotency-Key"));
  if (key !== null && typeof key !== "string") throw httpError(400, key);
  const checked = checkStart(body.worker, body.input);
  if ("status" in checked) throw httpError(checked.status, checked);
  const hook = runNotify(c.env, body, { field: "notify_url" });
  if ("error" in hook) throw httpError(400, { error: hook.error });
  const claim = key === null ? { ok: true as const, run: crypto.randomUUID(), replay: false } : await claimRun(c.env, "runs", key, body, crypto.randomUUID());
  if (!claim.ok) throw httpError(422, { error: "this Idempotency-Key was used within 24 hours with another request body; use a new key for a new run" });
  const id = claim.run;
  // A replay starts it too: the first request may have bound the key and died before its start (start is idempotent).
  // Behind Cloudflare Access too, the person it names started the run: they may not approve its calls (initiator.ts).
  const initiator = (await accessIdentity(c.env, c.req.header("Cf-Access-Jwt-Assertion")))?.email;
  await startRun(c.env, {
    id,
    worker: checked.worker.name,
    input: checked.input,
    approvalMode: body.approval_mode,
    budget: budgetOf(body.budget),
    trigger: { kind: "api", ...(initiator ? { initiator } : {}) },
    ...(hook.url ? { notify: { url: hook.url } } : {}),
    attributes: body.attributes,
  });
  const started = { id, status_url: new URL(appPath(`/runs/${id}`), c.req.url).href } satisfies z.input<typeof startedRun>;
  return claim.replay ? c.json(started, 200, { "Idempotent-Replayed": "true" }) : c.json(started, 202);
});

/** `id`, or 404 for an id that cannot be a run. */
function runId(id: string): string {
  if (!RUN_ID.test(id)) throw httpError(404, { error: `unknown run "${id}"` });
  return id;
}

/** The run's Durable Object, or 404 for an id that cannot be a run. */
const stubFor = (env: Env, id: string) => runStub(env, runId(id));

runs.get("/:id", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).status();
  if (!view) throw httpError(404, await missingRun(c.env, c.req.param("id")));
  return c.json(view satisfies z.input<typeof runView>);
});

/** The run as an eval case (its input, the tool calls it made): YAML for evals/, or `?format=json`. */
runs.get("/:id/eval-case", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).status();
  if (!view) throw httpError(404, await missingRun(c.env, c.req.param("id")));
  if (c.req.query("format") === "json") return c.json(evalSuiteOf(view));
  return c.text(evalSuiteYaml(view), 200, { "content-type": "text/yaml; charset=utf-8" });
});

/** The run's events (SSE); `?deltas=1` adds the model's text as it streams (`model_delta`, not persisted). */
runs.get("/:id/events", (c) => runEventStream(c, stubFor(c.env, c.req.param("id")), c.req.param("id"), { deltas: c.req.query("deltas") === "1" }));

/** A worker the run created, as `.worker` file text: commit it to `workers/` to keep it. */
runs.get("/:id/workers/:name", async (c) => {
  const answer = await stubFor(c.env, c.req.param("id")).createdWorker(c.req.param("name"));
  if (!answer.ok)
    throw httpError(
      answer.status,
      answer.status === 404 && answer.error === "unknown run" ? await missingRun(c.env, c.req.param("id")) : { error: answer.error },
    );
  return c.text(answer.text, 200, { "content-type": "text/plain; charset=utf-8" });
});

/** The run's journal steps (key, kind, time, size; never a value), paged by seq: a fork's `at` is one of these keys. */
runs.get("/:id/journal", async (c) => {
  const query = journalQuery.safeParse(c.req.query());
  if (!query.success) throw httpError(400, { error: "invalid query", issues: issueList(query.error) });
  const page = await stubFor(c.env, c.req.param("id")).journalSteps(query.data.after, query.data.limit);
  if (!page) throw httpError(404, await missingRun(c.env, c.req.param("id")));
  return c.json(page satisfies z.input<typeof journalPage>);
});

/** A new run whose journal is this run's prefix before `at`, run again from there (docs/debugging.md). */
runs.post("/:id/fork", async (c) => {
  const body = await jsonBody(c, forkBody);
  const source = runId(c.req.param("id"));
  const id = crypto.randomUUID();
  const answer = await runStub(c.env, id).fork({ id, source, at: body.at, definitions: body.definitions, approvalMode: body.approval_mode });
  if (!answer.ok)
    throw httpError(answer.status, answer.status === 404 && answer.error === "unknown run" ? await missingRun(c.env, source) : { error: answer.error });
  const forked = { id, status_url: new URL(appPath(`/runs/${id}`), c.req.url).href, forked_from: { run: source, at: body.at }, copied: answer.copied };
  return c.json(forked satisfies z.input<typeof forkedRun>, 202);
});

runs.post("/:id/approvals/:approvalId", async (c) => {
  const body = await jsonBody(c, decisionBody);
  const answer = await stubFor(c.env, c.req.param("id")).decide(c.req.param("approvalId"), { ...body, by: "api", decider: { email: null, via: "api" } });
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ approval_id: c.req.param("approvalId"), approved: answer.approved, status: answer.status, edited: answer.edited } satisfies z.input<
    typeof decision
  >);
});

/** Answers a question (`ctx.askHuman`, the `human` kind); 409 for a second answer, as for a second decision. */
runs.post("/:id/questions/:questionId", async (c) => {
  const { answer } = await jsonBody(c, answerBody);
  const decider = { email: null, via: "api" } as const;
  const result = await stubFor(c.env, c.req.param("id")).decide(c.req.param("questionId"), { decision: "approve", answer, by: "api", decider });
  if (!result.ok) throw httpError(result.status, { error: result.error });
  return c.json({ question_id: c.req.param("questionId"), answered: true } as const satisfies z.input<typeof answered>);
});

runs.post("/:id/cancel", async (c) => {
  const answer = await stubFor(c.env, c.req.param("id")).cancel();
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ id: c.req.param("id"), status: answer.status } satisfies z.input<typeof cancelledRun>);
});

/**
 * The next message of a run's conversation: its root worker answers it with its whole
 * history (202; a run that succeeded is running again, one still working keeps it waiting
 * its turn: `waiting: true`). 409 for a run that failed or was cancelled, or whose root is
 * a code function; 400/413 for a text that is empty or too long (durable-objects/run/conversation.ts).
 * With an `id` the run took before: 202 with `duplicate: true`, the run's status, and nothing new.
 */
runs.post("/:id/messages", async (c) => {
  const { text, id } = await jsonBody(c, messageBody);
  const answer = await stubFor(c.env, c.req.param("id")).sendMessage(text, id);
  if (!answer.ok) throw httpError(answer.status, answer.status === 404 ? await missingRun(c.env, c.req.param("id")) : { error: answer.error });
  const { status, message, duplicate, waiting } = answer;
  return c.json(
    { id: c.req.param("id"), status, message, ...(duplicate ? { duplicate } : {}), ...(waiting ? { waiting } : {}) } satisfies z.input<typeof sentMessage>,
    202,
  );
});

/** Re-arms a run that should be running (a lost activation or wake-up); 409 says why not. */
runs.post("/:id/resume", async (c) => {
  const answer = await stubFor(c.env, c.req.param("id")).resume();
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ id: c.req.param("id"), status: answer.status, resumed: true } as const satisfies z.input<typeof resumedRun>);
});

/**
 * An event for the run: taken by a wait for its name (the run wakes), or kept for
 * the next one. 202; the same `id` twice is one event; 409 for an ended run.
 */
runs.post("/:id/events/:name", async (c) => {
  const stub = stubFor(c.env, c.req.param("id"));
  const ev = checkEvent(c.req.param("name"), await jsonBody(c, eventBody));
  if ("status" in ev) throw httpError(ev.status, { error: ev.error });
  const answer = await stub.deliverEvent(ev, true);
  if (!answer.ok) throw httpError(answer.status, answer.status === 404 ? await missingRun(c.env, c.req.param("id")) : { error: answer.error });
  return c.json({ id: ev.id, applied: answer.applied, buffered: answer.buffered, duplicate: answer.duplicate } satisfies z.input<typeof sentEvent>, 202);
});
