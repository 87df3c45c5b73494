import { lastSegment, parentPath } from "../journal/keys";

/** An attribute's value as OTLP carries it (integers as numbers here; the encoder writes them as OTLP wants). */
export type SpanValue = string | number | boolean;

export interface SpanEvent {
  name: string;
  at: number;
  attributes: Record<string, SpanValue>;
}

/**
 * One finished span as the engine sees it: named by journal paths, not ids. `path` is
 * the journal path it stands for (a frame, a tool call or a model step's key) and
 * `parent` the path of the span it lies in (none for the run's root); the exporter
 * turns both into ids, so a span's identity is its place in the run, never a counter.
 * Times are milliseconds since the epoch.
 */
export interface TraceSpan {
  path: string;
  parent?: string;
  name: string;
  /** `client`: a request to a model provider; `internal`: everything else. */
  kind: "internal" | "client";
  start: number;
  end: number;
  attributes: Record<string, SpanValue>;
  events: SpanEvent[];
  /** Set for a call that ended in an error; `message` only when content is captured. */
  error?: { message?: string };
}

/** A tool call's path: `…/turn:<n>/tool:<i>` (grammar 1: `tool:<model id>`). */
export function isToolCall(path: string): boolean {
  const up = parentPath(path);
  return up !== undefined && lastSegment(path).startsWith("tool:") && lastSegment(up).startsWith("turn:");
}

/**
 * A frame's path: the root worker, a worker or function run by a call
 * (`<call>/<name>`, where `<call>` is a tool call or a `worker:`/`call:` effect), or an
 * `llmAgent` call (`…/agent:<n>`).
 */
export function isFrame(path: string): boolean {
  const up = parentPath(path);
  if (up === undefined) return true;
  const last = lastSegment(path);
  if (last.startsWith("agent:")) return true;
  if (last.includes(":")) return false;
  const call = lastSegment(up);
  return call.startsWith("tool:") || call.startsWith("worker:") || call.startsWith("call:");
}

/** The path of the span a journal path lies in: its nearest ancestor that is a frame or a tool call. */
export function spanParent(path: string): string | undefined {
  for (let up = parentPath(path); up !== undefined; up = parentPath(up)) if (isFrame(up) || isToolCall(up)) return up;
  return undefined;
}
