import type { RecordedResponse } from "../model-step";
import type { RecordedCall } from "../toolsets/wrappers/journaled";
import type { ApprovalDecision } from "../toolsets/wrappers/approval";

export interface StepEvent {
  type: "call" | "turn" | "tool" | "approval_notified" | "approval_decided" | "step";
  data: Record<string, unknown>;
}

export const preview = (v: unknown, max = 500) => {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max)}…` : text;
};

/**
 * What a recorded journal step means to someone watching the run: the journal is
 * the event log, so steps cost no extra rows to publish.
 */
export function stepEvents(key: string, value: unknown): StepEvent[] {
  const turn = /^(.*)\/turn:(\d+)\/model$/.exec(key);
  if (turn) {
    const res = value as RecordedResponse;
    const path = turn[1]!;
    const n = Number(turn[2]);
    const events: StepEvent[] = n === 1 ? [{ type: "call", data: { path, worker: path.slice(path.lastIndexOf("/") + 1) } }] : [];
    events.push({
      type: "turn",
      data: { path, turn: n, text: res.text, tool_calls: res.toolCalls.map((c) => ({ id: c.id, name: c.name })), usage: res.usage, cost_usd: res.costUsd },
    });
    return events;
  }
  if (key.endsWith("/result")) {
    const r = value as RecordedCall;
    const data = { path: key.slice(0, -"/result".length), ok: r.ok, ...(r.ok ? { result: preview(r.value) } : { error: r.error }) };
    return [{ type: "tool", data: r.truncatedFrom === undefined ? data : { ...data, truncated_from: r.truncatedFrom } }];
  }
  if (key.endsWith("/notify")) {
    return [{ type: "approval_notified", data: { path: key.slice(0, -"/notify".length), ...(value as Record<string, unknown>) } }];
  }
  if (key.endsWith("/approval")) {
    const d = value as ApprovalDecision;
    return [{ type: "approval_decided", data: { path: key.slice(0, -"/approval".length), approved: d.approved, by: d.by, note: d.note ?? null } }];
  }
  return [{ type: "step", data: { key } }];
}
