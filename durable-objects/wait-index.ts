import { DurableObject } from "cloudflare:workers";
import type { WaitIndexRpc } from "../src/runs/rpc";
import type { EventDelivery } from "../src/runs/types";

/** A listener is kept this long past its wait's deadline (a run's own alarm ends the wait; the index need not be exact). */
const GRACE_MS = 60_000;
/**
 * A signal is kept this long, and at most this many, for a run whose wait was asked before
 * the signal came but registered after it (a run registers its waits when it pauses, which
 * may be an activation, or a queued model answer, later).
 */
export const SIGNAL_MEMORY_MS = 15 * 60_000;
const SIGNALS_KEPT = 20;
/** Where signals are kept: `!` is in no run id (RUN_ID), so no listener's entry starts so. */
const SIGNAL = "!signal\n";

interface KeptSignal {
  at: number;
  ev: EventDelivery;
}

/**
 * The runs waiting for one event under one correlation key (src/runs/rpc.ts
 * `waitIndex`: one object per pair). Storage is the object's KV, one entry per
 * waiting run's wait (`<run id>\n<wait id>` → its deadline): a registration writes
 * one row, no table to create. A cache of the runs' own waits, never the truth: a run
 * that no longer waits answers a signal with "not applied" and is forgotten. It also
 * keeps the last signals for a while (one row each): a registration gets those that came
 * since its wait was asked, which no listing could have named it for.
 */
export class WaitIndexDO extends DurableObject<Env> implements WaitIndexRpc {
  async register(runId: string, waitId: string, until: number, since?: number): Promise<EventDelivery[]> {
    const entry = `${runId}\n${waitId}`;
    if (this.ctx.storage.kv.get<number>(entry) !== until) this.ctx.storage.kv.put(entry, until);
    if (since === undefined) return [];
    return [...this.ctx.storage.kv.list<KeptSignal>({ prefix: SIGNAL })].flatMap(([, s]) => (s.at >= since ? [s.ev] : []));
  }

  async waiting(now: number, limit: number, signal?: EventDelivery): Promise<string[]> {
    if (signal) this.keep(signal, now);
    const runs = new Set<string>();
    for (const [entry, until] of this.ctx.storage.kv.list<number>()) {
      if (entry.startsWith(SIGNAL)) continue;
      if (until + GRACE_MS < now) this.ctx.storage.kv.delete(entry);
      else if (runs.size < limit) runs.add(entry.slice(0, entry.indexOf("\n")));
    }
    return [...runs];
  }

  /** Keeps a signal (its row sorts by time), dropping those past SIGNAL_MEMORY_MS and the oldest past SIGNALS_KEPT. */
  private keep(ev: EventDelivery, now: number): void {
    const kv = this.ctx.storage.kv;
    kv.put<KeptSignal>(`${SIGNAL}${String(now).padStart(15, "0")}\n${ev.id}`, { at: now, ev });
    const kept = [...kv.list<KeptSignal>({ prefix: SIGNAL })];
    kept.forEach(([key, s], i) => {
      if (s.at + SIGNAL_MEMORY_MS < now || i < kept.length - SIGNALS_KEPT) kv.delete(key);
    });
  }

  async forget(runIds: string[]): Promise<void> {
    for (const runId of runIds) for (const [entry] of this.ctx.storage.kv.list({ prefix: `${runId}\n` })) this.ctx.storage.kv.delete(entry);
  }
}
