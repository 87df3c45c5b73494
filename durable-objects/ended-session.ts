import { DurableObject } from "cloudflare:workers";
import type { EndedSessionRpc } from "../src/http/middleware/people-auth";

/**
 * One per signed-out session id: remembers that the session ended until the moment
 * its signed token expires anyway, then deletes itself (an alarm), so what is kept
 * is bounded by the sessions signed out within one session lifetime. An object that
 * was never told `end` holds nothing: asking it costs one RPC and stores nothing.
 */
export class EndedSessionDO extends DurableObject<Env> implements EndedSessionRpc {
  /** Ends the session; `exp` (ms) is its token's expiry, after which the token is refused on its own. */
  async end(exp: number): Promise<void> {
    this.ctx.storage.kv.put("ended_until", exp);
    await this.ctx.storage.setAlarm(exp);
  }

  /** Whether the session was signed out (and its token has not expired yet). */
  async ended(): Promise<boolean> {
    const until = this.ctx.storage.kv.get<number>("ended_until");
    return until !== undefined && Date.now() <= until;
  }

  /** Its token has expired: nothing left to remember. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
