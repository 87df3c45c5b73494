/**
 * How a durable wait ended, as the host records it under the wait's key (one journal
 * row, journal/keys.ts `<call>/wait:<n>`): a sleep's wake-up, the event that came, or
 * the timeout of an event wait.
 */
export type WaitEnd = (
  | { ended: "time"; at: number }
  | { ended: "event"; at: number; id: string; payload: unknown }
  | { ended: "timeout"; at: number; after_ms: number }
) & {
  /** What ended: `sleep`, or `event:<name>` (`waitLabel`), so a replay that waits for something else there fails. Absent in older journals. */
  wait?: string;
};

/** What `ctx.waitForEvent` gives its caller. */
export type EventWaitResult = { status: "received"; id: string; payload: unknown } | { status: "timed_out"; message: string };
