import { prettyArgs } from "./format";
import type { CallDescription } from "../engine/types/toolset";
import { describedCall } from "./described-call";

/** A call as a person reads it (its kind's description), with the raw arguments one click away; only the raw arguments when the kind describes nothing. */
export function CallView(props: { call?: CallDescription; args: unknown; max?: number }) {
  const shown = describedCall(props.call, props.args, props.max);
  if (!shown.summary) return <pre>{shown.body}</pre>;
  return (
    <div class="call">
      <p>
        <code class="summary">{shown.summary}</code>
      </p>
      {props.call?.details ? <pre>{shown.body}</pre> : null}
      <details>
        <summary>Raw arguments</summary>
        <pre>{prettyArgs(props.args, props.max)}</pre>
      </details>
    </div>
  );
}

const FOLD_LINES = 12;

/** A tool's result as the call tree holds it (already unfolded and pretty): a long one folded under its first line, opened with a click (no script). */
export function ResultView(props: { text: string }) {
  const lines = props.text.split("\n");
  if (lines.length <= FOLD_LINES) return <pre>{props.text}</pre>;
  return (
    <details class="result">
      <summary>
        <code>{lines[0]!.slice(0, 120)}</code> … ({lines.length} lines)
      </summary>
      <pre>{props.text}</pre>
    </details>
  );
}
