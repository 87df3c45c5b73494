/**
 * A verified delivery of a trigger with flow control, handed to its key's object: the
 * key read from the payload (a delivery without one is refused, 400), what the key's
 * run would be given checked now (a message's length, an event's size), then the
 * object of (trigger, key) decides (durable-objects/flow/flow-key.ts).
 */

import type { Attributes } from "../../engine/attributes";
import { checkEvent } from "../../runs/events";
import type { Trigger } from "../triggers-file";
import { flowKeyObject } from "./rpc";
import { flowObjectName, keyValues } from "./key";
import { messageTooLong } from "./message-text";
import type { FlowAnswer } from "./outcome";

/** A delivery refused before its key's object saw it. */
export type FlowProblem = { problem: { status: 400 | 413; error: string } };

export async function flowDelivery(
  env: Env,
  t: Trigger,
  payload: unknown,
  delivery: { id: string; input: unknown; record: Record<string, unknown>; attributes?: Attributes },
): Promise<FlowAnswer | FlowProblem> {
  const key = keyValues(t.key, payload);
  if ("error" in key) return { problem: { status: 400, error: key.error } };
  const busy = t.concurrency?.on_busy;
  if (busy === "message") {
    const long = messageTooLong(delivery.input);
    if (long) return { problem: { status: 413, error: long } };
  } else if (typeof busy === "object") {
    const ev = checkEvent(busy.event, { payload: delivery.input });
    if ("status" in ev) return { problem: { status: ev.status, error: `as the event ${busy.event}: ${ev.error}` } };
  }
  const object = flowKeyObject(env, await flowObjectName(t.name, key.values));
  return object.deliver({ trigger: t.name, key: key.values, id: delivery.id, input: delivery.input, record: delivery.record, attributes: delivery.attributes });
}
