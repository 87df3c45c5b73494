import { nextTask } from "./next-task";

/**
 * A context's results handed back to the code that asked for them, one at a time, in
 * the order the journal recorded them, each after that code has run as far as it can
 * (a macrotask: every microtask it queued has run). The same order and the same pauses
 * on the first run and on every replay, so code that runs ctx calls in parallel
 * (`Promise.all(items.map(async (it) => …ctx.llmAsk…ctx.callTool…))`) makes its later
 * calls in the same order, and each gets the same number, whatever order its parallel
 * calls finished in on the first run — as Temporal and Restate replay. Without it a
 * replay resolves every recorded result at once in program order, and a call numbered
 * by completion order would meet another call's result or approval.
 *
 * A result that is not recorded (a failure before anything was written, a signal) is
 * handed on at once: it happens again on replay, as it did the first time.
 */
export class DeliveryOrder {
  /** Results ready to hand on, by their place in the journal's order. */
  private readonly ready: Array<{ at: number; settle: () => void }> = [];
  private scheduled = false;

  constructor(private readonly ordinal: (key: string) => number | undefined) {}

  /**
   * `running`'s outcome, handed on in the turn of the journal step that records it: under
   * `key`, or under `failedKey` when it failed (a step's error is recorded apart from its value).
   */
  deliver<T>(key: string, running: Promise<T>, failedKey = key): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      running.then(
        (value) => this.queue(key, () => resolve(value)),
        (err: unknown) => this.queue(failedKey, () => reject(err)),
      );
    });
  }

  private queue(key: string, settle: () => void): void {
    const at = this.ordinal(key);
    if (at === undefined) {
      settle();
      return;
    }
    let i = this.ready.length;
    while (i > 0 && this.ready[i - 1]!.at > at) i--;
    this.ready.splice(i, 0, { at, settle });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void nextTask().then(() => {
      this.scheduled = false;
      this.ready.shift()!.settle();
      if (this.ready.length) this.schedule();
    });
  }
}
