import { DurableObject } from "cloudflare:workers";
import type { WaitIndexRpc } from "../src/runs/rpc";

/** A listener is kept this long past its wait's deadline (a run's own alarm ends the wait; the index need not be exact). */
const GRACE_MS = 60_000;

/**
 * The runs waiting for one event under one correlation key (src/runs/rpc.ts
 * `waitIndex`: one object per pair). Storage is the object's KV, one entry per
 * waiting run's wait (`<run id>\n<wait id>` → its deadline): a registration writes
 * one row, no table to create. A cache of the runs' own waits, never the truth: a run
 * that no longer waits answers a signal with "not applied" and is forgotten.
 */
export class WaitIndexDO extends DurableObject<Env> implements WaitIndexRpc {
  async register(runId: string, waitId: string, until: number): Promise<void> {
    const entry = `${runId}\n${waitId}`;
    if (this.ctx.storage.kv.get<number>(entry) !== until) this.ctx.storage.kv.put(entry, until);
  }

  async waiting(now: number, limit: number): Promise<string[]> {
    const runs = new Set<string>();
    for (const [entry, until] of this.ctx.storage.kv.list<number>()) {
      if (until + GRACE_MS < now) this.ctx.storage.kv.delete(entry);
      else if (runs.size < limit) runs.add(entry.slice(0, entry.indexOf("\n")));
    }
    return [...runs];
  }

  async forget(runIds: string[]): Promise<void> {
    for (const runId of runIds) for (const [entry] of this.ctx.storage.kv.list({ prefix: `${runId}\n` })) this.ctx.storage.kv.delete(entry);
  }
}
