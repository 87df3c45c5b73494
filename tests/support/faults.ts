import { RunInterrupted } from "../../src/engine";

/** Test-pool hooks: fault injection, and a smaller activation budget to force checkpoints. */
export interface TestHooks {
  /** Interrupt before the first step that starts once the journal has this many steps. */
  fault?: { atJournalSize: number; mode: "throw" | "abort" };
  activationBudgetMs?: number;
}

/**
 * The test pool's faults for one run's object (TestRunDO): "evicted (or thrown)
 * after step k". Only `setTestHooks` arms it.
 */
export class FaultInjector {
  private fault: TestHooks["fault"];
  /** Set once a fault fired: every step that would start after it (concurrent ones too) stops. */
  private fired = false;
  activationBudgetMs: number | undefined;

  constructor(private readonly ctx: DurableObjectState) {}

  arm(hooks: TestHooks): void {
    this.fault = hooks.fault;
    this.activationBudgetMs = hooks.activationBudgetMs;
  }

  /** A fault waits to fire (checked once more between the last step and saving the outcome). */
  get armed(): boolean {
    return this.fault !== undefined;
  }

  /** A new activation: a fault that fired belonged to the last one. */
  reset(): void {
    this.fired = false;
  }

  /**
   * Interrupts the activation once the journal holds the fault's number of steps.
   * `othersSettled`: parallel steps finish first, since a parallel effect cut from
   * its record would repeat on replay (a real crash can do that; the test fault models
   * "evicted after step k").
   */
  async check(journalSize: number, othersSettled?: () => Promise<void>): Promise<void> {
    if (this.fired) throw new RunInterrupted("fault");
    if (!this.fault || journalSize < this.fault.atJournalSize) return;
    const { mode } = this.fault;
    this.fault = undefined;
    this.fired = true;
    if (mode === "abort") {
      // "Evicted after step k": step k is durable first. (A crash before its write
      // commits repeats that one step; the output gate keeps any later effect from
      // leaving before the write is confirmed.)
      await othersSettled?.();
      await this.ctx.storage.sync();
      this.ctx.abort("fault injected by test");
    }
    throw new RunInterrupted("fault");
  }
}
