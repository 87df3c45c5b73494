/**
 * Resolves once everything already queued has run, microtasks included: a new task.
 * `setImmediate` where the runtime has it (Node: `setTimeout(0)` waits a millisecond),
 * else `setTimeout(0)` (workerd: no delay).
 */
export function nextTask(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;
  return new Promise<void>((resolve) => (immediate ? immediate(resolve) : setTimeout(resolve, 0)));
}
