import type { AnswerEmailFailure, EmailFailureView } from "../runs/types";

const WHICH = { request: "the request", reminder: "the reminder", escalation: "the escalation" } as const;

/** An approval's emails that were not delivered, and why (the run page, the inbox). */
export function EmailFailures(props: { failures?: EmailFailureView[] }) {
  return (
    <>
      {(props.failures ?? []).map((f) => (
        <div class="error">
          {f.retrying ? "email not delivered yet" : "email not delivered"}: {f.reason} ({WHICH[f.kind]} to {f.to}
          {f.retrying ? `, ${f.attempts} attempt${f.attempts === 1 ? "" : "s"}, trying again` : ""})
        </div>
      ))}
    </>
  );
}

/** A conversation's answers that could not be mailed back, and why (the run page). */
export function AnswerEmailFailures(props: { failures?: AnswerEmailFailure[] }) {
  return (
    <>
      {(props.failures ?? []).map((f) => (
        <div class="error">
          email not delivered: {f.reason} (answer {f.message})
        </div>
      ))}
    </>
  );
}
