import { EVENT_ID } from "../api/bounds";
import { nestedDeeper } from "../engine/journal/bounds";
import { EVENT_NAME, MAX_CORRELATION_CHARS } from "../engine/waits/bounds";
import { runStub } from "./rpc";
import type { Answer, EventDelivery, EventOutcome } from "./types";

/** An event's payload, as stored JSON, at most this many bytes (a larger one is refused: 413). */
export const MAX_EVENT_BYTES = 64 * 1024;
/**
 * Levels of arrays and objects a payload may nest: a run's output may hold it, and
 * SQLite's JSON functions, which read the run's outcome, stop at 1000.
 */
export const MAX_EVENT_DEPTH = 64;
export { EVENT_ID };

/**
 * Checks an event from outside (an API caller, a signed webhook) before any run sees
 * it: its name, id, correlation key and payload size bounded. `id` absent: a fresh
 * one (no idempotency asked for).
 */
export function checkEvent(name: string, raw: { id?: unknown; payload?: unknown; key?: unknown }): EventDelivery | { status: 400 | 413; error: string } {
  if (!EVENT_NAME.test(name)) return { status: 400, error: "an event name is 1-64 characters of A-Z a-z 0-9 _ . -" };
  if (raw.id !== undefined && (typeof raw.id !== "string" || !EVENT_ID.test(raw.id)))
    return { status: 400, error: "id: a delivery id is 1-200 characters of A-Z a-z 0-9 _ . : -" };
  if (raw.key !== undefined && (typeof raw.key !== "string" || raw.key.length === 0 || raw.key.length > MAX_CORRELATION_CHARS))
    return { status: 400, error: `key: a correlation key is a string of 1-${MAX_CORRELATION_CHARS} characters` };
  const payload = raw.payload ?? null;
  if (nestedDeeper(payload, MAX_EVENT_DEPTH)) return { status: 400, error: `payload: nested deeper than ${MAX_EVENT_DEPTH} levels` };
  const bytes = new TextEncoder().encode(JSON.stringify(payload)).length;
  if (bytes > MAX_EVENT_BYTES) return { status: 413, error: `the payload is ${bytes} bytes as JSON; an event carries at most ${MAX_EVENT_BYTES} bytes` };
  return { name, id: (raw.id as string | undefined) ?? `ev_${crypto.randomUUID()}`, payload, ...(raw.key === undefined ? {} : { key: raw.key as string }) };
}

/** Delivers a checked event to one run: taken by a wait, or kept for the next one (`buffer`), or (a signal) nothing. */
export const deliverEvent = (env: Env, runId: string, ev: EventDelivery, buffer: boolean): Promise<Answer<EventOutcome>> =>
  runStub(env, runId).deliverEvent(ev, buffer);
