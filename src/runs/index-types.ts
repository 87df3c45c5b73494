import type { Usage } from "../engine";
import type { RunStatusName } from "./types";
import type { Attributes } from "../engine/attributes";

/** What started a run, as the index keeps it: never the payload or the delivery. */
export interface TriggerRef {
  kind: string;
  name?: string;
}

/**
 * One run as its RunDO reports it to the index: the whole summary every time, so
 * the latest one that lands is the truth and a lost one is repaired by the next.
 * `version` is the run's last event seq: the index never applies an older summary.
 */
export interface RunSummary {
  id: string;
  worker: string;
  status: RunStatusName;
  trigger: TriggerRef;
  /** Its attributes as they stand (src/engine/attributes.ts bounds them): what `attr.<name>` filters match. */
  attributes: Attributes;
  created_at: number;
  updated_at: number;
  usage: Usage | null;
  version: number;
  pending: PendingRef[];
}

export interface PendingRef {
  id: string;
  tool: string;
  worker_chain: string[];
  created_at: number;
  expires_at: number;
}

export type RunListItem = Omit<RunSummary, "version" | "pending">;

/** Which runs a listing (`GET /runs`, the inbox) or a bulk operation means: every criterion given must hold. */
export interface RunFilter {
  status?: RunStatusName;
  worker?: string;
  /** A trigger kind (`api`, `webhook`) or a trigger's name (`github-issues`). */
  trigger?: string;
  since?: number;
  /** Each attribute has exactly this value (at most MAX_ATTRIBUTE_FILTERS; the first drives the walk). */
  attributes?: Attributes;
}

export { MAX_ATTRIBUTE_FILTERS } from "../api/attributes";

export interface RunQuery extends RunFilter {
  limit: number;
  /** Keyset: runs strictly older than (created_at, id). */
  after?: { created_at: number; id: string };
}

export interface PendingApprovalItem extends PendingRef {
  run_id: string;
  run_worker: string;
}

/** What is left of a run that retention deleted. */
export interface Tombstone {
  id: string;
  worker: string;
  retention_days: number;
  finished_at: number;
  deleted_at: number;
}

/** The kind and name of a run's recorded trigger (`{kind: "webhook", name, delivery}`), and nothing else of it. */
export function triggerRef(trigger: unknown): TriggerRef {
  const t = (trigger ?? {}) as Record<string, unknown>;
  return { kind: typeof t.kind === "string" ? t.kind : "unknown", ...(typeof t.name === "string" ? { name: t.name } : {}) };
}

/** What a run's object answers the stuck-run sweep (durable-objects/run/sweep.ts; asked by durable-objects/run-sweep.ts). */
export interface SweepAnswer {
  /**
   * gone: no run here (never was, or deleted by retention); ok: not stuck (ended, paused, its
   * alarm set or running); woken: stuck, its alarm re-armed; failed: stuck too often, failed `stuck`.
   */
  verdict: "gone" | "ok" | "woken" | "failed";
  /** The run's summary, when it is newer than the version the index holds (a report that never arrived). */
  summary?: RunSummary;
}

/** An inbox lists at most this many pending approvals (oldest first), across the index's objects. */
export const MAX_PENDING_LISTED = 1000;
