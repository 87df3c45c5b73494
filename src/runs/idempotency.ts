/**
 * `Idempotency-Key` on `POST /runs`: a client that repeats a start after a lost
 * response gets the run its first request started, never a second run. The key is
 * bound to the SHA-256 of the request's body and the run id for 24 hours, in a
 * ledger object of its own (durable-objects/delivery-ledger.ts), named by the
 * key's hash: the key itself is never stored, logged or shown.
 */

import { sha256Hex } from "../engine/ids";

/** 1–255 visible ASCII characters (a UUID fits); anything else is refused before use. */
const KEY = /^[\x21-\x7e]{1,255}$/;
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** How long a key stays bound to its body and run. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Which route's keys a key belongs to: `POST /runs`'s and `POST /operations`' never meet, whatever
 * a client sends (a header value holds no newline; runs' keys hash as they always have).
 */
export type IdempotencyScope = "runs" | "operations";

/** A key's binding: its run (`replay`: bound by an earlier request), or refused (the key came with another body). */
export type IdempotentClaim = { ok: true; run: string; replay: boolean } | { ok: false };

/** What the app asks of a key's ledger object. */
export interface IdempotencyLedgerRpc {
  /** Binds the key to this body and `runId` unless it is bound (and not lapsed); returns the binding. Atomic. */
  claim(bodySha256: string, runId: string, ttlMs: number): Promise<IdempotentClaim>;
}

/** The header's key, null without one, or why it is refused. */
export function idempotencyKeyOf(header: string | undefined): string | null | { error: string } {
  if (header === undefined) return null;
  if (KEY.test(header)) return header;
  return {
    error: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters (no spaces or control characters); it has ${header.length} characters`,
  };
}

/**
 * The run a keyed start names: `runId` when the key is new (or lapsed), the bound
 * run when the same key came with the same body, or refused for another body.
 * The body is compared as the request's parsed JSON, defaults applied.
 */
export async function claimRun(env: Env, scope: IdempotencyScope, key: string, body: unknown, runId: string): Promise<IdempotentClaim> {
  const named = scope === "runs" ? key : `${scope}\n${key}`;
  const ledger = env.DELIVERIES.getByName(`idempotency-key:${await sha256Hex(named)}`) as unknown as IdempotencyLedgerRpc;
  return ledger.claim(await sha256Hex(JSON.stringify(body)), runId, IDEMPOTENCY_TTL_MS);
}
