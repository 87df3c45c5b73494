import { runPath } from "./runs";
import type { RequestOptions, Transport } from "./transport";
import type { Answered, Decision, DecideParams, PendingApprovals } from "./types";

/** Approvals across runs, and deciding one. */
export class Approvals {
  constructor(private readonly transport: Transport) {}

  /** `GET /approvals?status=pending`: every pending approval, oldest first. */
  list(options?: RequestOptions): Promise<PendingApprovals> {
    return this.transport.json({ method: "GET", path: "/approvals", query: { status: "pending" } }, options);
  }

  /**
   * `POST /runs/:runId/approvals/:approvalId`: approve (with `arguments`: edited first),
   * reject, or respond (`result` in the call's place). Retried like a read: a second
   * decision is refused (ConflictError), so a retry cannot decide twice; after a
   * lost response that refusal may be the answer to your own first decision.
   */
  decide(runId: string, approvalId: string, params: DecideParams, options?: RequestOptions): Promise<Decision> {
    const body = {
      decision: params.decision,
      ...(params.note !== undefined ? { note: params.note } : {}),
      ...(params.decision === "approve" && params.arguments !== undefined ? { arguments: params.arguments } : {}),
      ...(params.decision === "respond" ? { result: params.result } : {}),
    };
    return this.transport.json({ method: "POST", path: `${runPath(runId)}/approvals/${encodeURIComponent(approvalId)}`, body }, options);
  }

  /**
   * `POST /runs/:runId/questions/:questionId`: answers a question to a person (at most
   * 8000 characters). Retried like `decide`: a second answer is refused (ConflictError).
   */
  answer(runId: string, questionId: string, answer: string, options?: RequestOptions): Promise<Answered> {
    const path = `${runPath(runId)}/questions/${encodeURIComponent(questionId)}`;
    return this.transport.json({ method: "POST", path, body: { answer } }, options);
  }
}
