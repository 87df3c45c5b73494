import type { CallDescription } from "../engine/toolsets/toolset";
import { prettyArgs } from "./format";

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
