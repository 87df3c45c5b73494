import { resolvePointer } from "./json-pointer";
import type { Trigger } from "./triggers-file";
import { hex } from "./verify";

/** Does the payload pass the trigger's filter? Returns the first mismatch, or null. */
export function filterMismatch(t: Trigger, payload: unknown): string | null {
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
 * What identifies one delivery, however often it is retried: the provider's
 * delivery or event id, else an Idempotency-Key header, else the body's hash.
 */
export async function deliveryId(t: Trigger, verified: string | undefined, headers: Headers, payload: unknown, body: Uint8Array): Promise<string> {
  if (verified) return verified;
  if (t.verify.scheme === "stripe" && typeof (payload as { id?: unknown })?.id === "string") return (payload as { id: string }).id;
  const key = headers.get("Idempotency-Key");
  if (key) return key;
  return `sha256:${hex(new Uint8Array(await crypto.subtle.digest("SHA-256", body)))}`;
}

/** One delivery, one run: the run id is derived from trigger and delivery id. */
export async function runIdFor(trigger: string, delivery: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${trigger}\n${delivery}`)));
  return `hook_${trigger}_${hex(digest).slice(0, 32)}`;
}
