/**
 * A paused run (`awaiting_approval` or `waiting`) and its one alarm. Owns no table: it
 * ends what is due through RunApprovals and RunWaits, sends follow-up mail through
 * RunMail, and registers correlated waits with the wait index. Needs from its host:
 * `ctx` (transactions), `env` (the index binding), `row`, `now`, `wakeSoon`, `arm`, `io`;
 * a pause that ended meanwhile is made running through the lifecycle, and a signal the
 * index kept for a wait it did not know yet is delivered as any event (controls.ts).
 */

import type { RunOutcome } from "../../src/engine";
import { waitIndex } from "../../src/runs/rpc";
import { PAUSED, type EventDelivery } from "../../src/runs/types";
import type { RunRow } from "../rows";
import type { RunApprovals } from "./approvals";
import type { RunHost } from "./host";
import { mailRun, type RunMail } from "./mail";
import type { RunLifecycle } from "./lifecycle";
import type { RunRecord } from "./record";
import type { RunWaits } from "./waits";
import type { RunSlack } from "./slack";

/** What a pause waits for: its approvals and its waits (the engine's paused outcome). */
export type Paused = Pick<Extract<RunOutcome, { waits: unknown }>, "pending" | "waits">;

type PauseHost = Pick<RunHost, "ctx" | "env" | "row" | "now" | "wakeSoon" | "arm" | "io">;

export class RunPause {
  constructor(
    private readonly host: PauseHost,
    private readonly parts: {
      approvals: RunApprovals;
      waits: RunWaits;
      mail: RunMail;
      slack: RunSlack;
      record: Pick<RunRecord, "noted">;
      lifecycle: Pick<RunLifecycle, "activate" | "status">;
      /** Delivers a signal as the signal trigger would (RunControls.deliverEvent, not buffered). */
      signalled(ev: EventDelivery): Promise<unknown>;
    },
    /** How soon a registration the wait index refused is sent again. */
    private readonly indexRetryMs: number,
  ) {}

  /**
   * A paused run's alarm comes at its earliest approval expiry, follow-up email or
   * wait's deadline, or from a decision, an event or a resume: records the expired
   * rejections and the waits that ended; while nothing was decided or ended, sends the
   * follow-ups due and re-arms (true). False: replay.
   */
  async stillPaused(run: RunRow): Promise<boolean> {
    const { approvals, waits, mail } = this.parts;
    const now = this.host.now();
    this.host.ctx.storage.transactionSync(() => {
      approvals.expireDue(now);
      waits.endDue(now);
    });
    if (!PAUSED.includes(this.host.row()!.status) || (approvals.earliestExpiry() === null && waits.nextDeadline() === null)) return false;
    await this.host.io("approval.follow-up", async () => {
      await mail.sendFollowUps(mailRun(run));
      await this.parts.slack.sendFollowUps(Date.now());
    });
    await this.arm({ pending: [], waits: [] });
    return true;
  }

  /**
   * One alarm per pause: at the earliest of the pending approvals' expiries and
   * follow-up emails and the waits' deadlines (so what nobody answers ends then); at
   * once if a decision landed or a wait ended meanwhile, or ends now (an event kept
   * for it, a time already past): the run is then marked running, the alarm must replay.
   * Waits a signal trigger can end are registered with the correlation index first.
   */
  async arm(paused: Paused): Promise<void> {
    const { approvals, waits, lifecycle } = this.parts;
    const next = this.host.ctx.storage.transactionSync(() => {
      // Cancelled meanwhile, or running again: a decision or an event asked its own wake-up.
      if (!PAUSED.includes(lifecycle.status()!)) return "moved";
      const ended = waits.endDue(this.host.now());
      if (ended || approvals.anyResolved(paused.pending.map((p) => p.id)) || waits.anyEnded(paused.waits.map((w) => w.id))) return "resumed";
      return "paused";
    });
    if (next === "resumed" && lifecycle.activate().ok) return this.host.wakeSoon();
    if (next !== "paused") return;
    const registered = await this.registerCorrelated();
    // Read after the await: what ended meanwhile asked its own wake-up, which `arm` keeps.
    if (!PAUSED.includes(lifecycle.status()!)) return;
    const times = [approvals.nextWakeUp(), this.parts.slack.nextWakeUp(), waits.nextDeadline(), registered ? null : Date.now() + this.indexRetryMs];
    const due = times.filter((t): t is number => t !== null);
    if (due.length) await this.host.arm(Math.min(...due));
  }

  /**
   * Tells the correlation index (one object per event and key) which runs a signal may
   * wake; idempotent, so sent at every pause. Each index answers with the signals it kept
   * since the wait was asked: one that came before this registration reached no run, and
   * is delivered now. False when an index object could not be reached: the pause's alarm
   * comes sooner and sends it again (the run keeps waiting).
   */
  private async registerCorrelated(): Promise<boolean> {
    const runId = this.host.row()!.id;
    let missed: EventDelivery[][];
    try {
      missed = await this.host.io("pause.wait-index", () =>
        Promise.all(
          this.parts.waits
            .correlated()
            .map(async (w) => (await waitIndex(this.host.env, w.name!, w.correlation!)).register(runId, w.id, w.until, w.created_at)),
        ),
      );
    } catch {
      this.parts.record.noted("wait_index_failed", {});
      return false;
    }
    for (const ev of missed.flat()) await this.parts.signalled(ev);
    return true;
  }
}
