import { DurableObject } from "cloudflare:workers";
import type { IdempotencyLedgerRpc, IdempotentClaim } from "../src/runs/idempotency";
import type { DeliveryLedgerRpc } from "../src/triggers/delivery";

/** A keyed start's binding: the body's SHA-256, its run, and until when it holds. */
interface KeyedStart {
  body: string;
  run: string;
  until: number;
}

/**
 * Binds an id a client chose, which nothing signs, to the SHA-256 of the first body
 * that came with it; the same id with another body is refused. Two kinds of
 * objects, by name: one per (trigger, delivery id) — a redelivery passes, the run id
 * comes from signed content, never from here; one per `Idempotency-Key` of
 * `POST /runs` (src/runs/idempotency.ts) — the binding names the run and lapses.
 */
export class DeliveryLedgerDO extends DurableObject<Env> implements DeliveryLedgerRpc, IdempotencyLedgerRpc {
  /** Binds on first use. Atomic: nothing awaits between the read and the write. */
  async bind(bodySha256: string): Promise<{ ok: true } | { ok: false; bound: string }> {
    const bound = this.ctx.storage.kv.get<string>("body_sha256");
    if (bound === undefined) this.ctx.storage.kv.put("body_sha256", bodySha256);
    return bound === undefined || bound === bodySha256 ? { ok: true } : { ok: false, bound };
  }

  /** Binds a key to its body and run for `ttlMs`. Atomic (no await before the write); the object is deleted when it lapses. */
  async claim(bodySha256: string, runId: string, ttlMs: number): Promise<IdempotentClaim> {
    const now = Date.now();
    const held = this.ctx.storage.kv.get<KeyedStart>("start");
    if (held && held.until > now) return held.body === bodySha256 ? { ok: true, run: held.run, replay: true } : { ok: false };
    this.ctx.storage.kv.put("start", { body: bodySha256, run: runId, until: now + ttlMs } satisfies KeyedStart);
    await this.ctx.storage.setAlarm(now + ttlMs);
    return { ok: true, run: runId, replay: false };
  }

  /** A keyed start's binding lapsed: nothing of it is kept. */
  override async alarm(): Promise<void> {
    const held = this.ctx.storage.kv.get<KeyedStart>("start");
    if (held && held.until <= Date.now()) await this.ctx.storage.deleteAll();
  }
}
