import type { IoPoint } from "../../durable-objects/run/io";

/**
 * The test pool's hold on a run's object (TestRunDO) at one of its io points
 * (durable-objects/run/io.ts): the object stops at the nth pass through the point,
 * `before` its I/O starts or `after` it completed (its continuation not yet run), until
 * the test releases it. Meanwhile the object serves other requests, as it does while it
 * awaits real I/O: the test lands one there. Also keeps the points passed, in order.
 */
export class IoHold {
  private target: { point: IoPoint; nth: number; when: "before" | "after"; seen: number } | undefined;
  private reachedNow: Promise<void> = Promise.resolve();
  private signalReached: () => void = () => {};
  private released: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  private passed: IoPoint[] = [];

  arm(point: IoPoint, nth: number, when: "before" | "after"): void {
    this.target = { point, nth, when, seen: 0 };
    this.reachedNow = new Promise((resolve) => (this.signalReached = resolve));
    this.released = new Promise((resolve) => (this.open = resolve));
  }

  async pass<T>(point: IoPoint, fn: () => Promise<T>): Promise<T> {
    this.passed.push(point);
    const t = this.target;
    if (!t || t.point !== point || ++t.seen !== t.nth) return fn();
    this.target = undefined;
    if (t.when === "before") {
      this.signalReached();
      await this.released;
      return fn();
    }
    const result = fn();
    await result.then(
      () => undefined,
      () => undefined,
    );
    this.signalReached();
    await this.released;
    return result;
  }

  /** True once the object is held; false when `ms` passed first. */
  reached(ms: number): Promise<boolean> {
    return Promise.race([this.reachedNow.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
  }

  release(): void {
    this.target = undefined;
    this.open();
  }

  /** The points passed since the last call, in order. */
  trace(): IoPoint[] {
    return this.passed.splice(0);
  }
}
