import type { ApprovalView, RunView } from "../runs/types";
import { MAX_ANSWER_CHARS } from "../engine/approvals/ask-human";
import { describeTrigger, isoTime } from "./format";
import { Badge, Page } from "./layout";

/** A question to a person (`ctx.askHuman`) and a form that POSTs the answer. Showing it changes nothing. */
export function QuestionPage(props: { run: RunView; question: ApprovalView; action: string; runLink: string }) {
  const { run, question: q } = props;
  return (
    <Page title="A question for you">
      <h1>{q.worker_chain.join(" → ")} asks</h1>
      <blockquote>
        <pre>{q.description}</pre>
      </blockquote>
      <p>
        Run <a href={props.runLink}>{run.id}</a> of worker <code>{run.worker}</code>, started by {describeTrigger(run.trigger)}. <Badge status={run.status} />
      </p>
      <form method="post" action={props.action}>
        <p>
          <label>
            Your answer (the model reads it as written; at most {MAX_ANSWER_CHARS} characters)
            <br />
            <textarea name="answer" maxlength={MAX_ANSWER_CHARS} required></textarea>
          </label>
        </p>
        <button type="submit" class="approve primary">
          Send the answer
        </button>
      </form>
      <p>This link expires {isoTime(q.expires_at)}; unanswered by then, the run goes on with no answer.</p>
    </Page>
  );
}

export function AnsweredPage(props: { runLink: string }) {
  return (
    <Page title="Answered">
      <h1>Thank you</h1>
      <p>The run continues with your answer.</p>
      <p>
        <a href={props.runLink}>See the run</a>
      </p>
    </Page>
  );
}
