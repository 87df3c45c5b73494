/**
 * The awaits where a run's object lets other requests in. The input gate opens while
 * the object waits for I/O (an outgoing RPC, a fetch, a queue send, an email), so a
 * cancel, a decision, a message, an event or a delivered model answer may land there.
 * Each such await in `durable-objects/run/*.ts` and `durable-objects/model-dispatch.ts`
 * goes through `host.io(point, fn)`, named by one of these points: the interleaving
 * harness (tests/durable-objects/interleavings*.test.ts) holds the object at each of
 * them and lands every external request there; tests/node/io-points.test.ts fails on an
 * await of those files that neither goes through the seam nor is listed there as one
 * that cannot let a request in (a storage call closes the gate; crypto is no I/O).
 */

export const IO_POINTS = [
  /** The alarm's first await: reports to the run index still in flight (index-sync.ts). */
  "alarm.index-flush",
  /** The alarm mails answers due (answer-mail.ts) before it reads the run. */
  "alarm.answer-mail",
  /** The alarm sends the notifications due (outbox.ts: a flow key's RPC, a completion webhook) before it reads the run. */
  "alarm.outbox",
  /** Before each step of an activation (RunDO's `stepStarting` seam): the engine between two steps. */
  "activation.step",
  /** Between the engine's outcome and its record (RunDO's `outcomeReached` seam). */
  "activation.outcome",
  /** A model request the object makes itself (direct mode; queue mode when nobody claimed the hand-off). */
  "model.request",
  /** A call of a `scope: global` tool: RPC to GlobalToolsetsDO. */
  "global.call",
  /** `ctx.schedule`: RPC to the schedule's object (ScheduleDO), which lists it (ScheduleIndexDO). */
  "schedule.create",
  /** `ctx.spawn`, `ctx.map`, `run: child`: RPC to the child run's object, which starts it (idempotent per id). */
  "child.start",
  /** An ended run mails its answer (a conversation by email) before it arms retention. */
  "settle.answer-mail",
  /** An ended run sends its end's notifications (outbox.ts) before it arms retention. */
  "settle.outbox",
  /** The approval's request email (the engine's notifier step). */
  "approval.email",
  /** A reminder or escalation email of a paused run. */
  "approval.follow-up",
  /** A pause registers its correlated waits with the wait index (RPC). */
  "pause.wait-index",
  /** A report to the run index (RPC, off the run's path). */
  "index.report",
  /** Retention tells the run index the run is gone (RPC) before it deletes it. */
  "retention.retire",
  /** MODEL_DISPATCH=queue: a model request handed to the queue. */
  "model.hand-off",
  /** MODEL_DISPATCH=queue: the request's attachments read before the hand-off. */
  "model.attachments",
  /** MODEL_DISPATCH=queue: a consumer's claim reads the request's attachments into bytes. */
  "claim.wire",
] as const;

export type IoPoint = (typeof IO_POINTS)[number];

/** The seam every such await goes through: in production it runs `fn`, nothing else. */
export type Io = <T>(point: IoPoint, fn: () => Promise<T>) => Promise<T>;
