/**
 * A caller's signal joined with a time limit, without AbortSignal.any (not in
 * every runtime the client targets); `dispose` ends the limit and detaches from the caller's signal.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  dispose(): void;
}

export function deadline(parent: AbortSignal | undefined, ms: number | undefined, onTimeout: () => Error): Deadline {
  const controller = new AbortController();
  const follow = () => controller.abort(parent!.reason);
  if (parent?.aborted) follow();
  else parent?.addEventListener("abort", follow, { once: true });
  const timer = ms !== undefined && Number.isFinite(ms) ? setTimeout(() => controller.abort(onTimeout()), Math.max(0, ms)) : undefined;
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", follow);
    },
  };
}

/**
 * The promise, or the signal's reason as soon as it aborts: an injected fetch
 * that ignores its signal (or a body that never ends) cannot outlive a timeout.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return raceAbort(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), signal).finally(() => clearTimeout(timer));
}
