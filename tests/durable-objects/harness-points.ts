import type { IoPoint } from "../../durable-objects/run/io";

/**
 * Where each harness file holds the run's object, and at which drive steps that pass the
 * point (1: the first that does): together every point of io.ts (checked by the direct
 * file). A point passed at several moments of a run is held at each that differs.
 */
export interface Held {
  point: IoPoint;
  /** The drive steps passing the point to hold at (1: the first that passes it). */
  passes: number[];
  /** Held before its I/O starts, and (`after`) also once it completed: for an RPC, the request lands before and after its target saw it. */
  after: boolean;
}

const held = (point: IoPoint, passes: number[], after: boolean): Held => ({ point, passes, after });

export const DIRECT_POINTS: Held[] = [
  // The first alarm (queued), the one after the decision, the one after the answer and the event.
  held("alarm.index-flush", [1, 2, 3], false),
  held("alarm.answer-mail", [1, 3], false),
  // The first alarm (nothing due), then the ones after each pause (its notification is due).
  held("alarm.outbox", [1, 2, 3], true),
  held("activation.step", [1, 2], false),
  held("activation.outcome", [1], false),
  held("settle.answer-mail", [1], false),
  held("settle.outbox", [1], true),
  held("model.request", [1], true),
  held("global.call", [1], true),
  held("schedule.create", [1], true),
  held("approval.email", [1], true),
  held("approval.follow-up", [1], true),
  // The pause for approval (nothing correlated yet), then the one with the keyed wait.
  held("pause.wait-index", [1, 2], true),
  held("index.report", [1], true),
  held("retention.retire", [1], true),
];

/**
 * Points the harness does not hold, each with where a test lands at it instead. `child.start`: a child
 * run per case piled up across the file's two hundred cases (each case slower than the last, until
 * they timed out, while every point passes alone), so the harness's fixture starts no child; the
 * child-run tests evict the parent right after it (tests/durable-objects/children.test.ts,
 * `abortAfterIo("child.start")`) and the seeded variant's runs do not reach it either.
 */
export const HELD_ELSEWHERE: Partial<Record<IoPoint, string>> = {
  "child.start": "tests/durable-objects/children.test.ts (abortAfterIo at child.start, with random evictions)",
};

export const QUEUE_POINTS: Held[] = [held("model.attachments", [1], false), held("model.hand-off", [1], true), held("claim.wire", [1], true)];
