import type { RecordedResponse } from "../run/model-step";
import type { RecordedCall } from "../toolsets/wrappers/journaled";
import type { ApprovalDecision } from "../approvals/ask-approval";
import type { CompactionRecord } from "../run/compaction";
import { KEY_GRAMMAR, lastSegment, parseKey, toolCallKeys, type KeyGrammar } from "./keys";

export interface StepEvent {
  type: "call" | "turn" | "tool" | "approval_notified" | "approval_decided" | "history_compacted" | "step";
  data: Record<string, unknown>;
}

export const preview = (v: unknown, max = 500) => {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max)}…` : text;
};

/**
 * What a recorded journal step means to someone watching the run: the journal is
 * the event log, so steps cost no extra rows to publish. A turn lists its tool
 * calls with the model's ids beside their paths (the keys of their later events).
 */
export function stepEvents(key: string, value: unknown, grammar: KeyGrammar = KEY_GRAMMAR): StepEvent[] {
  const k = parseKey(key);
  switch (k.kind) {
    case "model": {
      const res = value as RecordedResponse;
      const path = k.frame;
      const events: StepEvent[] = k.turn === 1 ? [{ type: "call", data: { path, worker: lastSegment(path) } }] : [];
      const paths = toolCallKeys(grammar, path, k.turn, res.toolCalls);
      const calls = res.toolCalls.map((c, i) => ({ id: c.id, name: c.name, path: paths[i] }));
      const data = { path, turn: k.turn, text: res.text, tool_calls: calls, usage: res.usage, cost_usd: res.costUsd };
      events.push({ type: "turn", data: res.streamRefused ? { ...data, stream_refused: true } : data });
      return events;
    }
    case "result": {
      const r = value as RecordedCall;
      const data = { path: k.call, ok: r.ok, ...(r.ok ? { result: preview(r.value) } : { error: r.error }) };
      return [{ type: "tool", data: r.truncatedFrom === undefined ? data : { ...data, truncated_from: r.truncatedFrom } }];
    }
    case "notify":
      return [{ type: "approval_notified", data: { path: k.call, ...(value as Record<string, unknown>) } }];
    case "approval":
    case "budget_approval": {
      const d = value as ApprovalDecision;
      return [
        {
          type: "approval_decided",
          data: {
            path: k.call,
            approved: d.approved,
            by: d.by,
            ...(d.decider ? { decider: d.decider } : {}),
            note: d.note ?? null,
            // A person changed the call: ran with other arguments (on the run), or answered in its place.
            ...(d.args !== undefined ? { edited: true } : {}),
            ...(typeof d.response === "string" ? { responded: true } : {}),
          },
        },
      ];
    }
    case "compact": {
      const c = value as CompactionRecord;
      const data = { path: k.frame, turn: k.turn, compact: c.compact, replaced: c.to - c.from, tokens_before: c.tokensBefore, tokens_after: c.tokensAfter };
      return [{ type: "history_compacted", data: c.model ? { ...data, model: c.model } : data }];
    }
    default:
      return [{ type: "step", data: { key } }];
  }
}
