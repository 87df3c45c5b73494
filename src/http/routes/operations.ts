import { Hono } from "hono/tiny";
import type * as z from "zod";
import { operationBody, type operationStarted, type operationView } from "../../api/operations";
import { foreseenSkip, MAX_DRY_RUN, OPERATION_ID, operationStub, type DryRunView, type OperationBody, type OperationSpec } from "../../operations/api";
import { runIndex } from "../../runs";
import { claimRun, idempotencyKeyOf } from "../../runs/idempotency";
import { appPath } from "../base-path";
import { httpError } from "../http-error";
import { jsonBody } from "../validate";

/**
 * `POST /operations`: cancel, resume or fork every run a filter matches (202 with the operation's
 * id; a dry run lists them, 200). `GET /operations/:id`: its progress. `POST /operations/:id/cancel`.
 * With an `Idempotency-Key`, the same key and body within 24 h name the same operation.
 */
export const operations = new Hono<{ Bindings: Env }>();

operations.post("/", async (c) => {
  const body = await jsonBody(c, operationBody);
  if (body.dry_run) return c.json(await dryRun(c.env, body));
  if (!c.env.OPERATIONS)
    throw httpError(503, { error: "this deployment has no OPERATIONS binding (class OperationDO): add it to wrangler.toml (docs/operate.md)" });
  const key = idempotencyKeyOf(c.req.header("Idempotency-Key"));
  if (key !== null && typeof key !== "string") throw httpError(400, key);
  const fresh = `op-${crypto.randomUUID()}`;
  const claim = key === null ? { ok: true as const, run: fresh, replay: false } : await claimRun(c.env, "operations", key, body, fresh);
  if (!claim.ok) throw httpError(422, { error: "this Idempotency-Key was used within 24 hours with another request body; use a new key for a new operation" });
  const spec: OperationSpec = { id: claim.run, action: body.action, filter: body.filter, definitions: body.definitions ?? "current", created_at: Date.now() };
  const begun = await operationStub(c.env, spec.id).begin(spec);
  if (!begun.ok) throw httpError(409, { error: begun.error });
  const started = { id: spec.id, status_url: new URL(appPath(`/operations/${spec.id}`), c.req.url).href } satisfies z.input<typeof operationStarted>;
  return claim.replay ? c.json(started, 200, { "Idempotent-Replayed": "true" }) : c.json(started, 202);
});

operations.get("/:id", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).view();
  if (!view) throw httpError(404, { error: `unknown operation "${c.req.param("id").slice(0, 80)}"` });
  return c.json(view satisfies z.input<typeof operationView>);
});

operations.post("/:id/cancel", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).cancel();
  if (!view) throw httpError(404, { error: `unknown operation "${c.req.param("id").slice(0, 80)}"` });
  return c.json(view satisfies z.input<typeof operationView>);
});

/** The operation's object, or 404 for an id that cannot be one (nothing is made for it). */
function stubFor(env: Env, id: string) {
  if (!OPERATION_ID.test(id)) throw httpError(404, { error: `unknown operation "${id.slice(0, 80)}"` });
  return operationStub(env, id);
}

/** The runs the operation would touch, newest first (at most MAX_DRY_RUN), read as its walk would read them: nothing is written. */
async function dryRun(env: Env, body: OperationBody): Promise<DryRunView> {
  const runs: DryRunView["runs"] = [];
  let after = { created_at: Date.now() + 1, id: "" };
  for (;;) {
    const page = await runIndex(env).listRuns({ ...body.filter, limit: Math.min(200, MAX_DRY_RUN + 1 - runs.length), after });
    for (const r of page.runs) {
      const skip = foreseenSkip(body.action, r.status);
      runs.push({ id: r.id, worker: r.worker, status: r.status, created_at: r.created_at, attributes: r.attributes, ...(skip ? { skip } : {}) });
    }
    if (!page.next || runs.length > MAX_DRY_RUN) break;
    after = page.next;
  }
  return { dry_run: true, action: body.action, runs: runs.slice(0, MAX_DRY_RUN), truncated: runs.length > MAX_DRY_RUN };
}
