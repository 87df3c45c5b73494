import { Hono } from "hono/tiny";
import { triggers } from "../../catalog";
import { checkStart, startTriggerRun } from "../../runs";
import { deliveryHeader, deliveryLedger, filterMismatch, idempotencyKey, mapAttributes, mapInput, runIdFor } from "../../triggers/delivery";
import { sha256Hex } from "../../engine/ids";
import { signalWaitingRuns } from "../../triggers/signal";
import { verifyDelivery } from "../../triggers/verify";
import type { Trigger } from "../../triggers/triggers-file";
import { httpError } from "../http-error";
import { MAX_BODY_BYTES, readLimited } from "../read-body";
import { appPath } from "../base-path";
import { flowOf } from "../../triggers/flow/config";
import { flowDelivery } from "../../triggers/flow/deliver";
import type { hookFlowRefusalSchema, hookFlowResponseSchema, hookIgnored, hookRun, hookSignal } from "../../api/hooks";
import type * as z from "zod";
import { runNotify } from "../../notify/run-notify";

/** Providers' delivery ids are UUIDs and the like; anything much longer is not one. */
const MAX_DELIVERY_ID = 200;

/**
 * `POST /hooks/:name`: a signed delivery starts one run of the trigger's worker,
 * however often it is redelivered or replayed, and is answered at once (202). A
 * signal trigger's delivery instead wakes the runs waiting for its event under its
 * key (src/triggers/signal.ts), once each however often it comes.
 */
export const hooks = new Hono<{ Bindings: Env }>();

hooks.post("/:name", async (c) => {
  const name = c.req.param("name");
  const t = triggers().get(name);
  if (!t) throw httpError(404, { error: `unknown trigger "${name}"` });
  const secret = (c.env as unknown as Record<string, string | undefined>)[t.verify.secret_env];
  if (!secret)
    throw httpError(503, {
      error: `${t.verify.secret_env} is not set: trigger "${name}" refuses every delivery until it is (wrangler secret put ${t.verify.secret_env})`,
    });

  const body = await readLimited(c.req.raw, MAX_BODY_BYTES);
  const verified = await verifyDelivery(t, secret, c.req.raw.headers, body);
  if (!verified.ok) throw httpError(401, { error: `signature check failed: ${verified.reason}` });

  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw httpError(400, { error: "the payload is not valid JSON" });
  }
  const mismatch = filterMismatch(t, payload);
  if (mismatch) return c.json({ ignored: true, reason: `filter: ${mismatch}` } as const satisfies z.input<typeof hookIgnored>, 202);

  const checked = "signal" in t ? undefined : checkedInput(t, payload);
  if (checked && "status" in checked) throw httpError(checked.status === 404 ? 500 : checked.status, { error: checked.error });

  // The run comes from signed content; a delivery id header only has to agree with its first body.
  const bodySha256 = await sha256Hex(body);
  const delivery = deliveryHeader(t, c.req.raw.headers);
  if (delivery) {
    if (delivery.id.length > MAX_DELIVERY_ID) throw httpError(400, { error: `${delivery.header} is longer than ${MAX_DELIVERY_ID} characters` });
    const bound = await (await deliveryLedger(c.env, name, delivery.id)).bind(bodySha256);
    if (!bound.ok) {
      throw httpError(409, {
        error: `delivery id "${delivery.id}" (${delivery.header}) came before with another body (sha256 ${bound.bound}, this one ${bodySha256}): a redelivery carries the same body, a new event a new id`,
      });
    }
  }
  const key = idempotencyKey(t, payload, bodySha256);
  if ("signal" in t) {
    const signalled = await signalWaitingRuns(c.env, t, payload, key);
    if ("status" in signalled) throw httpError(signalled.status, { error: signalled.error });
    return c.json({ signal: t.signal.event, woken: signalled.woken } satisfies z.input<typeof hookSignal>, 202);
  }
  const hook = runNotify(c.env, t, { file: "triggers.yaml", field: `${name}.notify_url` });
  if ("error" in hook) throw httpError(503, { error: `trigger "${name}": ${hook.error}` });
  const record = { kind: "webhook", name, delivery: delivery?.id ?? key, body_sha256: bodySha256 };
  const statusUrl = (id: string) => new URL(appPath(`/runs/${id}`), c.req.url).href;
  if (flowOf(t)) {
    const answer = await flowDelivery(c.env, t, payload, { id: key, input: checked!.input, record, attributes: mapAttributes(t, payload) });
    if ("problem" in answer) throw httpError(answer.problem.status, { error: answer.problem.error });
    if ("refused" in answer) {
      const { error, retry_after } = answer;
      const headers: Record<string, string> = retry_after === undefined ? {} : { "Retry-After": String(retry_after) };
      throw httpError(answer.status, { error, ...(retry_after === undefined ? {} : { retry_after }) } satisfies z.input<typeof hookFlowRefusalSchema>, headers);
    }
    const body = { ...answer, ...("run_id" in answer ? { status_url: statusUrl(answer.run_id) } : {}) } satisfies z.input<typeof hookFlowResponseSchema>;
    return c.json(body, 202);
  }
  const id = await runIdFor(name, key);
  const started = await startTriggerRun(c.env, t, {
    id,
    checked: checked!,
    trigger: record,
    notify: hook.url ? { url: hook.url } : undefined,
    attributes: mapAttributes(t, payload),
  });
  return c.json({ run_id: id, status_url: statusUrl(id), duplicate: !started.created } satisfies z.input<typeof hookRun>, 202);
});

/**
 * The delivery's input, checked against the worker's schema. A batched debounce's run takes
 * `{batch: [each delivery's input]}`: a delivery is checked as a batch of one, and kept as its item.
 */
function checkedInput(t: Trigger, payload: unknown): ReturnType<typeof checkStart> {
  const input = mapInput(t, payload);
  if (!t.debounce?.batch) return checkStart(t.worker, input);
  const checked = checkStart(t.worker, { batch: [input] });
  return "status" in checked ? checked : { ...checked, input: (checked.input as { batch: unknown[] }).batch[0] };
}
