/**
 * The app's completion webhook: NOTIFY_URL (a var) hears of every run's end, and of its
 * pauses when NOTIFY_ON says so (`ended`, `paused`, comma- or space-separated; default
 * `ended`), besides a run's own `notify_url`. Read when a run ends or pauses, so a deploy
 * that sets it reaches the runs in flight too.
 */

import { NOTIFY_ON, type NotifyOn } from "../runs/types";

let warned = false;

export function globalNotify(env: { NOTIFY_URL?: string; NOTIFY_ON?: string }): { url: string; on: NotifyOn[] } | undefined {
  if (!env.NOTIFY_URL) return undefined;
  const words = (env.NOTIFY_ON ?? "").split(/[\s,]+/).filter(Boolean);
  const on = words.filter((w): w is NotifyOn => (NOTIFY_ON as readonly string[]).includes(w));
  if (on.length !== words.length && !warned) {
    warned = true;
    console.warn(`NOTIFY_ON: ${JSON.stringify(env.NOTIFY_ON)} names something other than ${NOTIFY_ON.join(", ")}; those words are ignored`);
  }
  return { url: env.NOTIFY_URL, on: on.length ? on : ["ended"] };
}
