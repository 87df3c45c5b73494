import { DurableObject } from "cloudflare:workers";
import type { DeliveryLedgerRpc } from "../src/triggers/delivery";

/**
 * One per (trigger, delivery id): binds a provider's delivery id, which no
 * signature covers, to the SHA-256 of the first body that came with it. A
 * redelivery (same body) passes; the same id with another body is refused.
 * The run id never comes from here: it comes from signed content.
 */
export class DeliveryLedgerDO extends DurableObject<Env> implements DeliveryLedgerRpc {
  /** Binds on first use. Atomic: nothing awaits between the read and the write. */
  async bind(bodySha256: string): Promise<{ ok: true } | { ok: false; bound: string }> {
    const bound = this.ctx.storage.kv.get<string>("body_sha256");
    if (bound === undefined) this.ctx.storage.kv.put("body_sha256", bodySha256);
    return bound === undefined || bound === bodySha256 ? { ok: true } : { ok: false, bound };
  }
}
