import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import * as z from "zod";
import { budgetOf, budgetSchema } from "../../engine/worker-file";
import { checkStart, missingRun, RUN_ID, runStub, startRun } from "../../runs";
import { httpError } from "../http-error";
import { jsonBody } from "../validate";

const startBody = z.strictObject({
  worker: z.string().min(1),
  input: z.unknown(),
  approval_mode: z.enum(["ask", "approve_all", "reject_all"]).default("ask"),
  budget: budgetSchema.default({}),
});

const decisionBody = z.strictObject({ decision: z.enum(["approve", "reject"]), note: z.string().max(2000).optional() });

/** How long one SSE response stays open before the client reconnects with Last-Event-ID (`SSE_MAX_MS`, default 60 s). */
const sseMaxMs = (env: Env) => (Number(env.SSE_MAX_MS) > 0 ? Number(env.SSE_MAX_MS) : 60_000);
const SSE_POLL_MS = 250;

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

runs.get("/:id/events", async (c) => {
  const stub = stubFor(c.env, c.req.param("id"));
  let cursor = c.req.header("Last-Event-ID") ?? c.req.query("after") ?? "0-0";
  const first = await stub.eventsSince(cursor);
  if (!first) throw httpError(404, { error: `unknown run "${c.req.param("id")}"` });
  const maxMs = sseMaxMs(c.env);
  return streamSSE(c, async (stream) => {
    // A client that stops reading makes a write wait forever: every write and
    // wait races the deadline and the client going away, so the response ends.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const over = new Promise<"over">((resolve) => {
      timer = setTimeout(() => resolve("over"), maxMs);
      stream.onAbort(() => resolve("over"));
    });
    try {
      let batch: typeof first | null = first;
      while (batch) {
        for (const ev of batch.events) {
          const written = await Promise.race([stream.writeSSE({ id: ev.id, event: ev.type, data: JSON.stringify(ev.data) }), over]);
          // A write still pending can only be undone by aborting: closing would wait for it.
          if (written === "over") return stream.abort();
          cursor = ev.id;
        }
        if (batch.done) return;
        if (!batch.events.length && (await Promise.race([stream.sleep(SSE_POLL_MS), over])) === "over") return;
        batch = await stub.eventsSince(cursor);
      }
    } finally {
      clearTimeout(timer);
    }
  });
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
