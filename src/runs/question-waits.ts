import { MAX_REASON_CHARS } from "../engine/waits/bounds";
import type { ApprovalView, WaitView } from "./types";

/**
 * What a run is paused on, as `GET /runs/:id` lists it in `waits`: its timers and
 * event waits, and its open questions to people, oldest first. A question ends by
 * itself as a wait does (it expires as "no answer"); its `name` is its id, what
 * answers it (`POST /runs/:id/questions/:name`), as an event's name is what delivers
 * it, and its `reason` the question, cut as a wait's reason is.
 */
export function pausedOn(waits: readonly WaitView[], approvals: readonly ApprovalView[]): WaitView[] {
  const questions = approvals
    .filter((a) => a.kind === "question" && a.status === "pending")
    .map(
      (a): WaitView => ({
        id: a.id,
        kind: "question",
        name: a.id,
        expires_at: a.expires_at,
        reason: a.description.slice(0, MAX_REASON_CHARS),
        call_path: a.call_path,
        worker_chain: a.worker_chain,
        created_at: a.created_at,
      }),
    );
  return [...waits, ...questions].sort((a, b) => a.created_at - b.created_at);
}
