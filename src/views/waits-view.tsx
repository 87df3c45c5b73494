import type { WaitView } from "../runs/types";
import { isoTime } from "./format";

/** What one wait waits for, in words: `event ci_finished (key abc123)`, `a timer`, `an answer`. */
export function describeWait(w: WaitView): string {
  if (w.kind === "sleep") return "a timer";
  if (w.kind === "question") return "an answer";
  if (w.kind === "child") return `child run ${w.key ?? ""} (${w.name ?? "?"})`;
  return `event ${w.name}${w.key !== undefined ? ` (key ${w.key})` : ""}`;
}

/** How a wait ends by itself, before its time. */
const ENDS = { sleep: "wakes ", event: "times out ", question: "expires " } as const;

/** The waits of a run (a timer, an event, a question), each with when it ends by itself. */
export function WaitsTable(props: { waits: WaitView[] }) {
  return (
    <table class="waits">
      <tr>
        <th>Waits for</th>
        <th>Asked by</th>
        <th>Why</th>
        <th>Ends</th>
      </tr>
      {props.waits.map((w) => (
        <tr>
          <td>{describeWait(w)}</td>
          <td>{w.worker_chain.join(" → ")}</td>
          <td>{w.reason ?? "—"}</td>
          <td>{w.kind === "child" ? "when the child ends" : [ENDS[w.kind], isoTime(w.expires_at)]}</td>
        </tr>
      ))}
    </table>
  );
}
