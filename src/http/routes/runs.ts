import { Hono } from "hono";
import * as z from "zod";
import { budgetOf, budgetSchema } from "../../engine/catalog/worker-file";
import { checkStart, missingRun, RUN_ID, runStub, startRun } from "../../runs";
import { checkEvent } from "../../runs/events";
import { httpError } from "../http-error";
import { runEventStream } from "../run-event-stream";
import { jsonBody } from "../validate";

const startBody = z.strictObject({
  worker: z.string().min(1),
  input: z.unknown(),
  approval_mode: z.enum(["ask", "approve_all", "reject_all"]).default("ask"),
  budget: budgetSchema.default({}),
});

const decisionBody = z.strictObject({ decision: z.enum(["approve", "reject"]), note: z.string().max(2000).optional() });

/** An event for a run; its bounds are checked by `checkEvent` (name, id, key, 64 KiB of payload). */
const eventBody = z.strictObject({ payload: z.unknown(), id: z.unknown().optional(), key: z.unknown().optional() });

export const runs = new Hono<{ Bindings: Env }>();

runs.post("/", async (c) => {
  const body = await jsonBody(c, startBody);
  const checked = checkStart(body.worker, body.input);
  if ("status" in checked) throw httpError(checked.status, checked);
  const id = crypto.randomUUID();
  await startRun(c.env, {
    id,
    worker: checked.worker.name,
    input: checked.input,
    approvalMode: body.approval_mode,
    budget: budgetOf(body.budget),
    trigger: { kind: "api" },
  });
  return c.json({ id, status_url: new URL(`/runs/${id}`, c.req.url).href }, 202);
});

/** The run's Durable Object, or 404 for an id that cannot be a run. */
function stubFor(env: Env, id: string) {
  if (!RUN_ID.test(id)) throw httpError(404, { error: `unknown run "${id}"` });
  return runStub(env, id);
}

runs.get("/:id", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).status();
  if (!view) throw httpError(404, await missingRun(c.env, c.req.param("id")));
  return c.json(view);
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

runs.post("/:id/approvals/:approvalId", async (c) => {
  const body = await jsonBody(c, decisionBody);
  const answer = await stubFor(c.env, c.req.param("id")).decide(c.req.param("approvalId"), { ...body, by: "api" });
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ approval_id: c.req.param("approvalId"), approved: answer.approved });
});

runs.post("/:id/cancel", async (c) => {
  const answer = await stubFor(c.env, c.req.param("id")).cancel();
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ id: c.req.param("id"), status: answer.status });
});

/** Re-arms a run that should be running (a lost activation or wake-up); 409 says why not. */
runs.post("/:id/resume", async (c) => {
  const answer = await stubFor(c.env, c.req.param("id")).resume();
  if (!answer.ok) throw httpError(answer.status, { error: answer.error });
  return c.json({ id: c.req.param("id"), status: answer.status, resumed: true });
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
  return c.json({ id: ev.id, applied: answer.applied, buffered: answer.buffered, duplicate: answer.duplicate }, 202);
});
