import type { BeforeStep } from "../journal/journal";
import { approvalKey, budgetPath, isModelStep, notifyKey, parentPath, parseKey, resultKey, toolCallKeys, waitEndOf, type KeyGrammar } from "../journal/keys";
import { workerName } from "../journal/call-tree";
import type { RecordedResponse } from "../run/model-step";
import type { RecordedCall } from "../toolsets/wrappers/journaled";
import type { ApprovalDecision } from "../approvals/ask-approval";
import type { JournalStore } from "../types/journal";
import type { Clock } from "../types/ports";
import type { Usage } from "../types/usage";
import { isFrame, isToolCall, spanParent, type SpanEvent, type SpanValue, type TraceSpan } from "./span";
import { waitEvents, type WaitAsked } from "./wait-events";

/** Longest content attribute kept (OTEL_CAPTURE_CONTENT): a span stays small whatever a tool returned. */
export const MAX_CONTENT_CHARS = 4000;
/** Longest tool name or call id kept: both come from the model's answer. */
export const MAX_NAME_CHARS = 256;

export interface TracerOptions {
  runId: string;
  /** The run's root worker: its frame is the run's span. */
  worker: string;
  keyGrammar: KeyGrammar;
  /** Prompts, answers, tool arguments and results as attributes (as the journal holds them: redacted). */
  captureContent: boolean;
  clock: Clock;
  /**
   * When the model request of step `key` was handed to a queue (its latest attempt),
   * if it was: an earlier activation's doing, so the span starts there and shows the hand-off.
   */
  handedOff?: (key: string) => { at: number; attempt: number } | undefined;
  /** What the host kept of the wait whose end is recorded at `key` (journal/keys.ts `waitEndOf`), if anything. */
  waitAsked?: (key: string) => WaitAsked | undefined;
}

/**
 * Turns one activation's newly recorded journal steps into spans (OpenTelemetry GenAI
 * conventions): a model step is a `chat` span, a tool call's result an `execute_tool`
 * span, a nested worker an `invoke_agent` span, the run's end the root's. It sees only
 * what is recorded for the first time (`observe` wraps the store's `put`), so a replayed
 * step makes no span; `beforeStep` marks when a step started. A durable wait is a pair of
 * events on the span of the tool or function that waited, made with that span (so once,
 * however many activations the wait spanned). Never throws into the run:
 * a span it cannot make is counted in `failures` and left out.
 */
export class StepTracer {
  private readonly spans: TraceSpan[] = [];
  private readonly started = new Map<string, number>();
  private readonly recorded = new Map<string, unknown>();
  private readonly frames = new Set<string>();
  /** The keys of ended waits (`waitEndOf`), by the span they lie in. */
  private readonly waits = new Map<string, string[]>();
  private loaded: ReadonlyMap<string, unknown> = new Map();
  failures = 0;

  constructor(private readonly options: TracerOptions) {}

  /** `store`, reporting each step it records. */
  observe(store: JournalStore): JournalStore {
    return {
      load: async () => {
        const entries = await store.load();
        this.loaded = entries;
        for (const key of entries.keys()) this.noteStep(key);
        return entries;
      },
      put: (key, value, json) => {
        const put = store.put(key, value, json);
        if (!put) return this.stepRecorded(key, value);
        return put.then(() => this.stepRecorded(key, value));
      },
    };
  }

  /** `inner`, after noting when the step about to execute started. */
  beforeStep(inner?: BeforeStep): BeforeStep {
    return (key, journal) => {
      this.started.set(key, this.options.clock.now());
      return inner?.(key, journal);
    };
  }

  /** The root span, once the run has ended (`startedAt`: when the run was created). */
  runEnded(startedAt: number, outcome: { status: "succeeded" | "failed" | "cancelled"; usage: Usage; error?: { code: string; message: string } }): void {
    const { worker, runId, captureContent } = this.options;
    this.guarded(() => {
      const span = this.frameSpan(worker, startedAt, this.options.clock.now(), outcome.status === "failed" ? outcome.error?.message : undefined);
      Object.assign(span.attributes, {
        "edgework.run.id": runId,
        "edgework.run.status": outcome.status,
        "gen_ai.usage.input_tokens": outcome.usage.inputTokens,
        "gen_ai.usage.output_tokens": outcome.usage.outputTokens,
        "edgework.cost_usd": outcome.usage.costUsd,
      });
      if (outcome.error) span.attributes["error.type"] = outcome.error.code;
      if (!captureContent && span.error) span.error = {};
      this.spans.push(span);
    });
  }

  /** The spans made so far, handed over once. */
  drain(): TraceSpan[] {
    return this.spans.splice(0);
  }

  private stepRecorded(key: string, value: unknown): void {
    this.guarded(() => {
      this.recorded.set(key, value);
      this.noteStep(key);
      const parsed = parseKey(key);
      if (isModelStep(key)) this.chat(key, value as RecordedResponse);
      else if (parsed.kind === "result") this.callEnded(parsed.call, value as RecordedCall);
    });
  }

  private guarded(make: () => void): void {
    try {
      make();
    } catch {
      this.failures++;
    }
  }

  private chat(key: string, res: RecordedResponse): void {
    const end = this.options.clock.now();
    const attributes: Record<string, SpanValue> = {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": res.model,
      "gen_ai.usage.input_tokens": res.usage.inputTokens,
      "gen_ai.usage.output_tokens": res.usage.outputTokens,
      "edgework.cost_usd": res.costUsd,
    };
    if (this.options.captureContent) {
      const parts = [
        ...(res.text ? [{ type: "text", content: res.text }] : []),
        ...res.toolCalls.map((c) => ({ type: "tool_call", id: c.id, name: c.name, arguments: c.arguments })),
      ];
      attributes["gen_ai.output.messages"] = content(JSON.stringify([{ role: "assistant", parts }]));
    }
    let start = this.started.get(key) ?? end;
    const events = this.approvalEvents(budgetPath(key), start);
    const handOff = this.options.handedOff?.(key);
    if (handOff) {
      start = Math.min(start, handOff.at);
      events.push({ name: "edgework.queue.handoff", at: handOff.at, attributes: { "edgework.queue.attempt": handOff.attempt } });
    }
    this.spans.push({ path: key, parent: spanParent(key), name: `chat ${res.model}`, kind: "client", start, end, attributes, events });
  }

  /**
   * A call's result: its tool span (for a tool call) and the spans of the frames it ran,
   * begun no later than the first wait they hold (the result's step began after it, in
   * the activation the wait's end resumed).
   */
  private callEnded(call: string, outcome: RecordedCall): void {
    const end = this.options.clock.now();
    const start = this.started.get(resultKey(call)) ?? end;
    const failed = outcome.ok ? undefined : outcome.error;
    const made: TraceSpan[] = [];
    if (isToolCall(call)) made.push(this.toolSpan(call, outcome, start, end));
    for (const frame of this.frames) {
      if (frame === call || parentPath(frame) === call) made.push(this.frameSpan(frame, start, end, failed));
    }
    const first = made.reduce((t, s) => s.events.reduce((u, e) => Math.min(u, e.at), t), start);
    for (const span of made) this.spans.push({ ...span, start: first });
  }

  private toolSpan(call: string, outcome: RecordedCall, start: number, end: number): TraceSpan {
    const requested = this.requestedCall(call);
    const name = cut(outcome.name ?? requested?.name ?? "unknown", MAX_NAME_CHARS);
    const attributes: Record<string, SpanValue> = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name };
    if (requested) attributes["gen_ai.tool.call.id"] = cut(requested.id, MAX_NAME_CHARS);
    if (this.options.captureContent) {
      if (requested) attributes["gen_ai.tool.call.arguments"] = content(requested.arguments);
      if (outcome.ok) attributes["gen_ai.tool.call.result"] = content(JSON.stringify(outcome.value ?? null));
    }
    const span: TraceSpan = {
      path: call,
      parent: spanParent(call),
      name: `execute_tool ${name}`,
      kind: "internal",
      start,
      end,
      attributes,
      events: [...this.approvalEvents(call, start), ...this.waitEvents(call, start)],
    };
    if (!outcome.ok) span.error = this.options.captureContent ? { message: content(outcome.error) } : {};
    return span;
  }

  private frameSpan(frame: string, start: number, end: number, failed?: string): TraceSpan {
    const name = workerName(frame);
    const span: TraceSpan = {
      path: frame,
      parent: spanParent(frame),
      name: `invoke_agent ${name}`,
      kind: "internal",
      start,
      end,
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name },
      events: this.waitEvents(frame, start),
    };
    if (failed !== undefined) span.error = this.options.captureContent ? { message: content(failed) } : {};
    return span;
  }

  /** The model's request for a tool call, from the answer of its turn. */
  private requestedCall(call: string): { id: string; name: string; arguments: string } | undefined {
    const modelKey = `${parentPath(call)}/model`;
    const turn = parseKey(modelKey);
    const res = this.lookup<RecordedResponse>(modelKey);
    if (turn.kind !== "model" || !res) return undefined;
    const i = toolCallKeys(this.options.keyGrammar, turn.frame, turn.turn, res.toolCalls).indexOf(call);
    return res.toolCalls[i];
  }

  /** A pause for approval as events: asked (a person was notified), then decided. Their times are not journaled: the span's start. */
  private approvalEvents(call: string, at: number): SpanEvent[] {
    const events: SpanEvent[] = [];
    if (this.lookup(notifyKey(call)) !== undefined) events.push({ name: "edgework.approval.requested", at, attributes: {} });
    const decision = this.lookup<ApprovalDecision>(approvalKey(call));
    if (decision)
      events.push({
        name: "edgework.approval.decided",
        at,
        attributes: decidedAttributes(decision),
      });
    return events;
  }

  /** The waits that ended in the span at `path`, as events (wait-events.ts); `at`: the span's start, for an end whose time is unknown. */
  private waitEvents(path: string, at: number): SpanEvent[] {
    const { waitAsked, captureContent } = this.options;
    return (this.waits.get(path) ?? []).flatMap((key) => waitEvents(waitEndOf(key)!.kind, this.lookup(key), waitAsked?.(key), at, captureContent));
  }

  private lookup<T>(key: string): T | undefined {
    return (this.recorded.get(key) ?? this.loaded.get(key)) as T | undefined;
  }

  /** A step seen (loaded or recorded): the frames it lies in, and a wait's end. */
  private noteStep(key: string): void {
    this.noteFrames(key);
    if (!waitEndOf(key)) return;
    const span = spanParent(key);
    if (span === undefined) return;
    const keys = this.waits.get(span);
    if (!keys) this.waits.set(span, [key]);
    else if (!keys.includes(key)) keys.push(key);
  }

  /** Every frame a key lies in, so a call's result can close the frames it ran. */
  private noteFrames(key: string): void {
    for (let up = parentPath(key); up !== undefined; up = parentPath(up)) {
      if (this.frames.has(up)) return;
      if (isFrame(up)) this.frames.add(up);
    }
  }
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);
const content = (text: string) => cut(text, MAX_CONTENT_CHARS);

/**
 * The decision's audit on its span event: how it ended the call, how it reached the run
 * (`via`: link, reply, inbox, access, api; absent when no person decided: an expiry, the
 * run's mode) and who (`enduser.id`, OTel's attribute for a person: absent when the way
 * proves none, as the API token), as `GET /runs/:id` has them. `by` is the same words as
 * the run page's, cut: the host bounds it.
 */
function decidedAttributes(d: ApprovalDecision): Record<string, SpanValue> {
  const attributes: Record<string, SpanValue> = {
    "edgework.approval.approved": d.approved === true,
    "edgework.approval.outcome": outcomeOf(d),
    "edgework.approval.by": cut(String(d.by), MAX_NAME_CHARS),
  };
  if (d.decider) attributes["edgework.approval.via"] = d.decider.via;
  if (d.decider?.email) attributes["enduser.id"] = cut(d.decider.email, MAX_NAME_CHARS);
  if (d.args_hash) attributes["edgework.approval.args_sha256"] = d.args_hash;
  return attributes;
}

/** How a decision ended its call, for the span event: approved as asked, edited, answered by a person, or rejected. */
const outcomeOf = (d: ApprovalDecision) =>
  typeof d.response === "string" ? "responded" : !d.approved ? "rejected" : d.args !== undefined ? "edited" : "approved";
