import { contextWith } from "./context-with";
import { nextTask } from "./next-task";
import { stepRunning } from "./step-scope";
import { pausedTogether, propagates, RunPaused } from "../errors";
import type { ToolContext } from "../types/context";
import type { StateKV } from "../types/state";

/** The ctx methods that act for user code (a journaled effect, a nested call): the ones a signal may leave, so the ones a boundary guards. */
export const EFFECT_METHODS = [
  "llmAsk",
  "llmAgent",
  "callTool",
  "callWorker",
  "step",
  "now",
  "randomId",
  "askHuman",
  "sleep",
  "sleepUntil",
  "waitForEvent",
  "setAttribute",
  "schedule",
] as const;

/** Where a ctx handed to user code keeps its boundary (read by the engine's contexts when they make a method). */
export const BOUNDARY = Symbol("signalBoundary");

/**
 * A promise that never settles: what user code awaits once its activation is to end.
 * A new one each time: code awaiting a shared one would stay reachable from it for good.
 */
const never = (): Promise<never> => new Promise<never>(() => {});

/**
 * The line between engine code and user code that holds a `ctx` (a function's body,
 * a kind's tool): no engine signal crosses it into user code, as an activity in
 * Temporal's workflows is a pending promise, never an exception. A ctx call that
 * meets a signal stays pending, and the signal is reported here:
 * - a pause (an approval, a question, a timer, an event wait) parks its call: the body
 *   runs on as far as it can without it (`Promise.race` against a timeout is decided by
 *   whichever comes first); once nothing of it is in flight and it has not ended, it is
 *   blocked, and the boundary rejects with every pause it parked. A body that ends
 *   meanwhile ends the call if it parked only timers and event waits (they have no
 *   effect: a race's loser is left behind); an approval or a question it parked is
 *   still waited for (a call it started and did not await is an effect all the same).
 * - anything else (an interruption, a storage failure, a fatal error) stops the body:
 *   new calls stay pending without acting, and once none is in flight the boundary
 *   rejects with it (and what was parked); whatever the body returns or throws is
 *   ignored (replay runs it again).
 */
export class SignalBoundary {
  private inFlight = 0;
  private signal: unknown = undefined;
  /** The pauses of the calls parked so far. */
  private parked: RunPaused | undefined;
  /** A check whether the body is blocked on its parked calls is due at the next task. */
  private checking = false;
  /** The body's outcome once it settled (before a signal), and `run`'s promise to settle. */
  private ended = false;
  private ok = false;
  private outcome: unknown = undefined;
  private resolve?: (value: unknown) => void;
  private reject?: (err: unknown) => void;

  /** Runs `body` inside the boundary (once per boundary): its result, or the signal its calls met. */
  run<T>(body: () => T | Promise<T>): Promise<T> {
    const done = new Promise<T>((resolve, reject) => {
      this.resolve = resolve as (value: unknown) => void;
      this.reject = reject;
    });
    let result: T | Promise<T>;
    try {
      result = body();
    } catch (error) {
      this.end(false, error);
      return done;
    }
    (result instanceof Promise ? result : Promise.resolve(result)).then(
      (value) => this.end(true, value),
      (error: unknown) => this.end(false, error),
    );
    return done;
  }

  private end(ok: boolean, outcome: unknown): void {
    // A signal engine code inside the body raised itself (not through ctx) joins the others.
    if (!ok && propagates(outcome)) this.report(outcome);
    this.ended = true;
    this.ok = ok;
    this.outcome = outcome;
    this.settle();
  }

  /** Settles `run`'s promise once nothing is in flight: with the signal if one was met, else with the body's outcome. */
  private settle(): void {
    if (this.inFlight > 0) return;
    if (this.signal !== undefined) this.reject!(this.parked ? combinedSignal(this.signal, this.parked) : this.signal);
    else if (this.ended && this.parked?.pending.length && this.ok) this.reject!(this.parked);
    else if (this.ended) (this.ok ? this.resolve! : this.reject!)(this.outcome);
  }

  /**
   * Nothing is in flight but parked calls: once the body has run as far as it can (a
   * new task: every microtask it queued has run), if it has still not ended nor made a
   * call, it waits on them, and the activation pauses with them.
   */
  private checkBlocked(): void {
    if (this.checking) return;
    this.checking = true;
    void nextTask().then(() => {
      this.checking = false;
      if (!this.ended && this.signal === undefined && this.inFlight === 0 && this.parked) this.reject!(this.parked);
    });
  }

  /**
   * `effect` as the body sees it: its value or real failure, or pending forever once a
   * signal is met here. Not inside a `ctx.step` function: there a ctx call is refused and
   * a state failure rejects (pending, either would hold the step open for good, and the
   * activation with it); the step's own call reports a signal, the step records an error.
   */
  call<R>(effect: () => Promise<R>): Promise<R> {
    if (stepRunning() !== undefined) {
      try {
        return effect();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (this.signal !== undefined) return never();
    this.inFlight++;
    let running: Promise<R>;
    try {
      running = effect();
    } catch (err) {
      running = Promise.reject(err);
    }
    return running.then(
      (value) => (this.done() ? never() : value),
      (err: unknown) => {
        if (err instanceof RunPaused) {
          this.parked = this.parked ? pausedTogether(this.parked, err) : err;
          this.done();
          return never();
        }
        if (propagates(err)) this.report(err);
        if (this.done()) return never();
        throw err;
      },
    );
  }

  /**
   * One call less in flight (the last may settle `run`: a signal met, or a body that
   * returned before it, or find the body blocked on what it parked); true once a signal
   * is met (the body must not go on).
   */
  private done(): boolean {
    this.inFlight--;
    if (this.ended || this.signal !== undefined) this.settle();
    else if (this.inFlight === 0 && this.parked) this.checkBlocked();
    return this.signal !== undefined;
  }

  private report(err: unknown): void {
    this.signal = combinedSignal(this.signal, err);
  }
}

/**
 * Two signals as one: a fatal error, an interruption or a storage failure wins
 * (the first); pauses (approvals, timers, event waits) are merged, so parallel calls
 * that each wait are paused together (as the loop does with one turn's tool calls).
 */
export function combinedSignal(seen: unknown, err: unknown): unknown {
  if (seen === undefined) return err;
  if (seen instanceof RunPaused && err instanceof RunPaused) return pausedTogether(seen, err);
  return seen instanceof RunPaused ? err : seen;
}

export type Effect = (...args: never[]) => Promise<unknown>;

export const guarded =
  (boundary: SignalBoundary, effect: Effect): Effect =>
  (...args) =>
    boundary.call(() => effect(...args));

/**
 * `ctx` (with `members` replaced) as handed to user code running inside `boundary`:
 * each effect method, already there or made later, and its state store (a failed
 * write is a `StorageError`) report a signal to the boundary instead of rejecting.
 * Copies of it (`contextWith`) stay bound.
 */
export function boundContext(ctx: ToolContext, boundary: SignalBoundary, members: Partial<ToolContext> = {}): ToolContext {
  const bound = contextWith(ctx, members);
  const own = bound as unknown as Record<string | symbol, unknown>;
  own[BOUNDARY] = boundary;
  own.state = new BoundState(bound.state, boundary);
  for (const name of EFFECT_METHODS) if (Object.hasOwn(bound, name)) own[name] = guarded(boundary, bound[name] as Effect);
  return bound;
}

/** A state store whose failures (signals) stop the code holding it, as its ctx calls do. */
class BoundState implements StateKV {
  constructor(
    private readonly inner: StateKV,
    private readonly boundary: SignalBoundary,
  ) {}
  get<T>(key: string): Promise<T | undefined> {
    return this.boundary.call(() => this.inner.get<T>(key));
  }
  put(key: string, value: unknown): Promise<void> {
    return this.boundary.call(() => this.inner.put(key, value));
  }
  delete(key: string): Promise<boolean> {
    return this.boundary.call(() => this.inner.delete(key));
  }
  list(prefix?: string): Promise<Array<[string, unknown]>> {
    return this.boundary.call(() => this.inner.list(prefix));
  }
}
