import { sha256Hex } from "../engine/ids";
import { resolvePointer } from "./json-pointer";
import { attributeValue, type Attributes } from "../engine/attributes";
import type { HookTrigger, Trigger } from "./triggers-file";

/** Does the payload pass the trigger's filter? Returns the first mismatch, or null. */
export function filterMismatch(t: Pick<HookTrigger, "filter">, payload: unknown): string | null {
  for (const [where, expected] of Object.entries(t.filter)) {
    const pointer = where.startsWith("/") ? where : `/${where}`;
    const actual = resolvePointer(payload, pointer);
    const allowed = Array.isArray(expected) ? expected : [expected];
    if (!allowed.some((v) => v === actual)) return `${pointer} is ${JSON.stringify(actual ?? null)}, not ${allowed.map((v) => JSON.stringify(v)).join(" or ")}`;
  }
  return null;
}

/** The worker's input from the payload: each field from its JSON pointer (absent fields left out). */
export function mapInput(t: Trigger, payload: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [field, pointer] of Object.entries(t.input)) {
    const v = resolvePointer(payload, pointer);
    if (v !== undefined) input[field] = v;
  }
  return input;
}

/**
 * The run's attributes from the payload: each from its JSON pointer. A value that is absent, or
 * not a short string, number or boolean without control characters (src/engine/attributes.ts),
 * is left out: the payload is the sender's, and a run starts without what it could not carry.
 */
export function mapAttributes(t: Pick<Trigger, "attributes">, payload: unknown): Attributes {
  const attributes: Attributes = {};
  for (const [name, pointer] of Object.entries(t.attributes)) {
    const v = attributeValue(resolvePointer(payload, pointer));
    if ("value" in v) attributes[name] = v.value;
  }
  return attributes;
}

/**
 * What makes a delivery one delivery, from what its signature covers: Stripe's
 * event id (inside the signed body), else the SHA-256 of the body. Never an
 * unsigned header: a captured body replayed under fresh delivery ids is still
 * one delivery. (For `token` nothing is signed: the body is what the token
 * holder sent.)
 */
export function idempotencyKey(t: Pick<HookTrigger, "verify">, payload: unknown, bodySha256: string): string {
  const id = (payload as { id?: unknown } | null)?.id;
  if (t.verify.scheme === "stripe" && typeof id === "string" && id) return id;
  return `sha256:${bodySha256}`;
}

/** Where each scheme's senders put a delivery id (Stripe's is the event id, in the body). */
const DELIVERY_HEADER: Record<Trigger["verify"]["scheme"], string | null> = {
  github: "X-GitHub-Delivery",
  hmac: "Idempotency-Key",
  token: "Idempotency-Key",
  stripe: null,
};

/** The sender's own delivery id, which no signature covers: bound to its body, never the run's id. */
export function deliveryHeader(t: Pick<HookTrigger, "verify">, headers: Headers): { header: string; id: string } | null {
  const header = DELIVERY_HEADER[t.verify.scheme];
  const id = header ? headers.get(header) : null;
  return header && id ? { header, id } : null;
}

/** One delivery, one run: the run id is derived from trigger and idempotency key. */
export async function runIdFor(trigger: string, key: string): Promise<string> {
  return `hook_${trigger}_${(await sha256Hex(new TextEncoder().encode(`${trigger}\n${key}`))).slice(0, 32)}`;
}

/** What the app asks of a delivery's ledger object (durable-objects/delivery-ledger.ts implements it). */
export interface DeliveryLedgerRpc {
  /** Binds the delivery id to this body on first use; refuses another body later. */
  bind(bodySha256: string): Promise<{ ok: true } | { ok: false; bound: string }>;
}

/** The ledger object that binds one trigger's delivery id to its body. */
export async function deliveryLedger(env: Env, trigger: string, delivery: string) {
  return env.DELIVERIES.getByName(await sha256Hex(new TextEncoder().encode(`${trigger}\n${delivery}`))) as unknown as DeliveryLedgerRpc;
}
