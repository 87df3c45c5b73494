import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Whether code runs inside a `ctx.step` function, and which. A step's function runs
 * once and its value is recorded; on replay it does not run at all. A ctx call made
 * inside it would be skipped then, and every later call of the context renumbered (a
 * POST sent twice, a sleep slept twice), and one that pauses would leave the step
 * pending for good. So ctx calls are refused there (as Restate refuses them inside
 * `ctx.run`). An async context, not a flag: a parallel branch outside the step calls
 * ctx freely while the step runs. (Node and workerd with `nodejs_compat` both have it.)
 */
const running = new AsyncLocalStorage<string>();

/** Runs a step's function marked as such (`name`: the step's, for errors). */
export const inStep = <T>(name: string, fn: () => T | Promise<T>): T | Promise<T> => running.run(name, fn);

/** The name of the `ctx.step` whose function is running here, if any. */
export const stepRunning = (): string | undefined => running.getStore();
