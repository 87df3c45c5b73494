import type { CallNode } from "./call-tree";
import { isModelStep, lastSegment, parentPath, parseKey, resultKey, within } from "./keys";

/** A journal step's times: `startedAt` when it began executing (null: recorded without executing), `at` when recorded. */
export interface TimedStep {
  key: string;
  at: number;
  startedAt: number | null;
}

export type SpanKind = "worker" | "model" | "tool" | "pause";

/** One bar of the run's waterfall: times in ms since the epoch; `depth` its nesting under the root worker. */
export interface Span {
  kind: SpanKind;
  label: string;
  /** The call path or step key it stands for ("" for a pause). */
  path: string;
  depth: number;
  start: number;
  end: number;
  /** Not ended yet: a tool call waiting for its approval or running, a pause still waiting. */
  open?: boolean;
}

export interface Timeline {
  start: number;
  end: number;
  spans: Span[];
  /** Spans left out past `MAX_SPANS` (the latest ones). */
  omitted: number;
  /** Time in model requests, in tool calls (a nested worker's inside its caller's), paused (for a person, a timer, an event, an answer), and the run's wall time. */
  totals: { model_ms: number; tool_ms: number; paused_ms: number; wall_ms: number };
}

/** The most spans a timeline carries: a run page stays readable, `GET /runs/:id` bounded. */
export const MAX_SPANS = 400;

/**
 * The run's timeline from its journal rows' times, its call tree and its pauses: a
 * worker call spans its steps, a model request and a tool call their own step's row
 * (`startedAt` to `at`), in call order: each worker, then its requests and calls by
 * start, each call followed by the workers it ran.
 */
export function runTimeline(
  steps: readonly TimedStep[],
  tree: CallNode | null,
  pauses: ReadonlyArray<{ start: number; end: number | null; label: string }>,
  run: { start: number; end: number },
): Timeline {
  const spans: Span[] = [];
  if (tree) frameSpans(tree, 0, { steps, byKey: new Map(steps.map((s) => [s.key, s])), frames: framePaths(tree), now: run.end }, spans);
  for (const p of pauses)
    spans.push({
      kind: "pause",
      label: p.label,
      path: "",
      depth: 0,
      start: p.start,
      end: p.end ?? run.end,
      ...(p.end === null ? { open: true } : {}),
    });
  const sum = (kind: SpanKind) => spans.reduce((n, s) => n + (s.kind === kind && (kind !== "tool" || s.depth === 1) ? s.end - s.start : 0), 0);
  return {
    start: run.start,
    end: spans.reduce((t, s) => Math.max(t, s.end), run.end),
    spans: spans.slice(0, MAX_SPANS),
    omitted: Math.max(0, spans.length - MAX_SPANS),
    totals: { model_ms: sum("model"), tool_ms: sum("tool"), paused_ms: sum("pause"), wall_ms: run.end - run.start },
  };
}

const startOf = (s: TimedStep) => s.startedAt ?? s.at;

/** What every frame's spans are read from. */
interface Steps {
  steps: readonly TimedStep[];
  byKey: Map<string, TimedStep>;
  /** Every frame's path: a step belongs to the deepest one it lies within. */
  frames: Set<string>;
  now: number;
}

function frameSpans(frame: CallNode, depth: number, all: Steps, out: Span[]): void {
  const own = all.steps.filter((s) => within(s.key, frame.path));
  if (!own.length) return;
  // Folded, not spread: a long run's steps would overflow the arguments of Math.min.
  const start = own.reduce((t, s) => Math.min(t, startOf(s)), Number.POSITIVE_INFINITY);
  out.push({ kind: "worker", label: frame.worker, path: frame.path, depth, start, end: own.reduce((t, s) => Math.max(t, s.at), 0) });
  const children: Array<{ start: number; emit: () => void }> = [];
  for (const s of own) {
    if (!isModelStep(s.key) || ownerFrame(s.key, all.frames) !== frame.path) continue;
    const label = parseKey(s.key).kind === "model" ? `model, ${lastSegment(s.key.slice(0, -"/model".length))}` : `ask, ${lastSegment(s.key)}`;
    children.push({ start: startOf(s), emit: () => out.push({ kind: "model", label, path: s.key, depth: depth + 1, start: startOf(s), end: s.at }) });
  }
  for (const tool of frame.tools) {
    const result = all.byKey.get(resultKey(tool.path));
    const first = all.steps.find((s) => within(s.key, tool.path));
    if (!first) continue; // asked of the model, not started yet
    const began = startOf(result ?? first);
    children.push({
      start: began,
      emit: () => {
        out.push({
          kind: "tool",
          label: tool.name,
          path: tool.path,
          depth: depth + 1,
          start: began,
          end: result?.at ?? all.now,
          ...(result ? {} : { open: true }),
        });
        for (const call of tool.calls) frameSpans(call, depth + 2, all, out);
      },
    });
  }
  for (const c of children.sort((a, b) => a.start - b.start)) c.emit();
}

function framePaths(tree: CallNode, into = new Set<string>()): Set<string> {
  into.add(tree.path);
  for (const t of tree.tools) for (const c of t.calls) framePaths(c, into);
  return into;
}

/** The deepest frame a step lies within (a model step's frame, or for `ask:N` the call whose context asked). */
function ownerFrame(key: string, frames: Set<string>): string | undefined {
  for (let path = parentPath(key); path !== undefined; path = parentPath(path)) if (frames.has(path)) return path;
  return undefined;
}
