/**
 * What a completion webhook posts: one event per status event of the run (its end, or a
 * pause when asked for), the same body on every attempt. The schema is the contract
 * receivers code against (docs/triggers.md); the body is bounded: an output over
 * MAX_NOTIFIED_OUTPUT_BYTES as JSON is left out (`output_truncated`: read it from
 * `GET /runs/:id`), at most MAX_NOTIFIED_WAITS of what a pause waits for.
 */

import * as z from "zod";
import { sha256Hex } from "../engine/ids";
import { RUN_STATUSES, TERMINAL, type RunStatusName } from "../runs/types";

export const MAX_NOTIFIED_OUTPUT_BYTES = 32 * 1024;
export const MAX_NOTIFIED_WAITS = 20;

export const notificationSchema = z.object({
  /** Stable across attempts: a receiver keeps the ids it took and ignores a repeat. */
  id: z.string(),
  type: z.enum(["run.ended", "run.paused"]),
  /** When the run ended or paused (ms since 1970). */
  created_at: z.number(),
  run: z.object({
    id: z.string(),
    worker: z.string(),
    status: z.enum(RUN_STATUSES),
    /** The run's page, when PUBLIC_URL is set. */
    url: z.string().optional(),
    output: z.unknown().optional(),
    output_truncated: z.literal(true).optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    usage: z.unknown().optional(),
    waiting_for: z.array(z.unknown()).optional(),
    /** A cancel's reason (e.g. replaced by a newer run of its flow key). */
    reason: z.string().optional(),
  }),
});

export type Notification = z.infer<typeof notificationSchema>;

/** The event id of the run's status event `seq`: the same for every attempt, never the same for two events. */
export const notificationId = async (runId: string, seq: number) => `evt_${(await sha256Hex(`${runId}\n${seq}`)).slice(0, 32)}`;

/** The body for the status event `type` (`run_succeeded`…) with its `data`, of run `run`. */
export function notificationOf(
  id: string,
  run: { id: string; worker: string; url?: string },
  event: { type: string; data: Record<string, unknown>; at: number },
): Notification {
  const status = event.type.slice("run_".length) as RunStatusName;
  const { output, error, usage, waiting_for, reason } = event.data as Record<string, unknown>;
  const fits = output !== undefined && new TextEncoder().encode(JSON.stringify(output)).length <= MAX_NOTIFIED_OUTPUT_BYTES;
  return {
    id,
    type: TERMINAL.includes(status) ? "run.ended" : "run.paused",
    created_at: event.at,
    run: {
      id: run.id,
      worker: run.worker,
      status,
      ...(run.url ? { url: run.url } : {}),
      ...(output === undefined ? {} : fits ? { output } : { output_truncated: true as const }),
      ...(error ? { error: error as { code: string; message: string } } : {}),
      ...(usage ? { usage } : {}),
      ...(Array.isArray(waiting_for) ? { waiting_for: waiting_for.slice(0, MAX_NOTIFIED_WAITS) } : {}),
      ...(typeof reason === "string" ? { reason } : {}),
    },
  };
}
