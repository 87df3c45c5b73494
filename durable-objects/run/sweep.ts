/**
 * The stuck-run sweep as a run's object answers it (RunDO `sweep`). The run index asks
 * (run-sweep.ts), from a view that may be stale; the run decides, on its own state, through
 * the lifecycle (lifecycle.ts `stuck`, `revive`, `abandon`). Owns one KV row (`stuck-sweeps`:
 * the wake-ups so far, and the journal step they found). Needs from its host: `ctx` (KV,
 * transactions), `env` (retention), the SQL, `row`, `event`, `wakeSoon` and `arm`.
 */

import { clearRunState } from "../../src/engine";
import type { RunSummary, SweepAnswer } from "../../src/runs/index-types";
import type { RunRow } from "../rows";
import type { SqliteStateBackend } from "../sqlite-state";
import type { RunHost } from "./host";
import type { RunIndexSync } from "./index-sync";
import type { RunLifecycle } from "./lifecycle";
import { deletionDue } from "./retention";
import { runUsage } from "./usage";

/**
 * Wake-ups the sweep gives a stuck run while no step is recorded between them: found stuck
 * once more after them, it fails. Each one is an activation the platform retries about six
 * times before it drops it, so a run that fails here was ended some 25 times without an outcome.
 */
export const SWEEP_WAKE_UPS = 3;

/** The KV row of the sweep's wake-ups: how many, and the journal's last step when the last was made. */
const WAKE_UPS = "stuck-sweeps";
interface WakeUps {
  n: number;
  step: number;
}

type SweepHost = Pick<RunHost, "ctx" | "env" | "sql" | "row" | "event" | "wakeSoon" | "arm">;

export interface SweptParts {
  lifecycle: Pick<RunLifecycle, "stuck" | "revive" | "abandon">;
  index: Pick<RunIndexSync, "newerThan">;
  states: SqliteStateBackend;
  /** The run failed here, outside an activation (its trace's root span, tracing.ts). */
  failed(run: RunRow, error: { code: string; message: string }): void;
}

export class RunSweep {
  constructor(
    private readonly host: SweepHost,
    private readonly parts: SweptParts,
  ) {}

  /**
   * The index asks about a run it lists as queued or running (`indexed`: the summary version
   * it holds). Not stuck (ended, paused, its alarm set or running): nothing is written. Stuck:
   * woken, or failed once its wake-ups ran out. The answer carries the run's summary when the
   * index is behind.
   */
  async sweep(indexed: number): Promise<SweepAnswer> {
    if (!this.host.row()) return { verdict: "gone" }; // never started, or deleted by retention (its tables with it)
    const stuck = await this.parts.lifecycle.stuck();
    // Read after the await (a storage call: nothing landed meanwhile, but the rule holds: lifecycle.ts invariant 6).
    const run = this.host.row();
    if (!run) return { verdict: "gone" };
    const verdict = stuck ? await this.mend(run) : "ok";
    return withSummary(verdict, this.parts.index.newerThan(indexed));
  }

  /** A stuck run: woken, unless it was woken `SWEEP_WAKE_UPS` times with no step recorded since the first; then failed. */
  private async mend(run: RunRow): Promise<SweepAnswer["verdict"]> {
    const { ctx, sql } = this.host;
    const step = sql.one<{ s: number }>`SELECT coalesce(max(seq), 0) AS s FROM journal`!.s;
    const last = ctx.storage.kv.get<WakeUps>(WAKE_UPS);
    const n = last?.step === step ? last.n + 1 : 1;
    if (n > SWEEP_WAKE_UPS) return this.giveUp(run, n);
    const moved = this.parts.lifecycle.revive(() => {
      ctx.storage.kv.put<WakeUps>(WAKE_UPS, { n, step });
      this.host.event("run_swept", { attempt: n, of: SWEEP_WAKE_UPS });
    });
    if (!moved.ok) return "ok";
    await this.host.wakeSoon();
    return "woken";
  }

  /** Fails the run with the reason, as a cancel ends it: run-scoped state cleared, retention armed. */
  private async giveUp(run: RunRow, found: number): Promise<SweepAnswer["verdict"]> {
    const error = { code: "stuck" as const, message: stuckMessage(found) };
    if (!this.parts.lifecycle.abandon(error, runUsage(this.host.sql, run.usage)).ok) return "ok";
    this.parts.failed(run, error);
    await clearRunState(this.parts.states, run.id);
    await this.host.arm(deletionDue(this.host.env, this.host.row()!.updated_at));
    return "failed";
  }
}

function withSummary(verdict: SweepAnswer["verdict"], summary: RunSummary | null): SweepAnswer {
  return summary ? { verdict, summary } : { verdict };
}

/** Why a stuck run failed: how often, and what likely ended it (no address, no input: it is shown and logged as is). */
export function stuckMessage(found: number): string {
  return (
    `the platform ended this run's activation without an outcome and dropped its alarm ${found} times in a row, ` +
    `with no step recorded in between (the stuck-run sweep found it each time and woke it ${found - 1} times; ` +
    `the platform retries each activation about six times before it drops it). Likely cause: the CPU limit ` +
    `([limits] cpu_ms in wrangler.toml), the 128 MB memory limit or an alarm's 15-minute wall-time limit, ` +
    `reached at the same step every time: see the run's last steps (GET /runs/:id/journal) and docs/operate.md, "Stuck runs".`
  );
}
