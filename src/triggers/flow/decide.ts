/**
 * What a key does with the delivery at the head of its line, from what it holds now:
 * its runs in progress (oldest first) and what its rate allows. Pure: the key's object
 * (durable-objects/flow) records the decision and then acts on it.
 */

import type { FlowConfig } from "./config";

export type Decision =
  /** A run starts for it; `cancel`: the oldest run of the key is cancelled first (`on_busy: replace`). */
  | { act: "start"; cancel?: string }
  /** It goes to the key's run `run` as a message. */
  | { act: "message"; run: string }
  /** It goes to the key's run `run` as the event `name`. */
  | { act: "event"; run: string; name: string }
  /** Nothing comes of it: the key is busy with `run`. */
  | { act: "skip"; run: string }
  /** It stays at the head of the line: until a run ends (no `until`), or until the rate allows (`until`). */
  | { act: "wait"; until?: number };

/** Whether the decision lets the delivery through to a run (what the rate counts). */
export const reachesRun = (d: Decision) => d.act === "start" || d.act === "message" || d.act === "event";

/**
 * `active`: the key's runs in progress, oldest first; `rate`: whether the rate lets one more through now (undefined: no rate).
 * With no concurrency limit the key is never busy.
 */
export function decide(flow: Pick<FlowConfig, "concurrency">, active: readonly string[], rate: { ok: true } | { ok: false; at: number } | undefined): Decision {
  const limit = flow.concurrency?.limit ?? Infinity;
  let d: Decision;
  if (active.length < limit) d = { act: "start" };
  else {
    const busy = flow.concurrency!.on_busy;
    const newest = active.at(-1)!;
    if (busy === "queue") return { act: "wait" };
    if (busy === "skip") return { act: "skip", run: newest };
    if (busy === "replace") d = { act: "start", cancel: active[0]! };
    else if (busy === "message") d = { act: "message", run: newest };
    else d = { act: "event", run: newest, name: busy.event };
  }
  return rate && !rate.ok ? { act: "wait", until: rate.at } : d;
}
