import { prettyArgs } from "./format";
import type { CallDescription } from "../engine/types/toolset";

/** A call as a person reads it (its kind's description), with the raw arguments one click away; only the raw arguments when the kind describes nothing. */
export function CallView(props: { call?: CallDescription; args: unknown; max?: number }) {
  if (!props.call) return <pre>{prettyArgs(props.args, props.max)}</pre>;
  return (
    <div class="call">
      <p>
        <code class="summary">{props.call.summary}</code>
      </p>
      {props.call.details ? <pre>{cut(props.call.details, props.max)}</pre> : null}
      <details>
        <summary>Raw arguments</summary>
        <pre>{prettyArgs(props.args, props.max)}</pre>
      </details>
    </div>
  );
}

const cut = (text: string, max = 4000) => (text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text);

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
