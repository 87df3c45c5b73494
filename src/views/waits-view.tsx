import type { WaitView } from "../runs/types";
import { isoTime } from "./format";

/** What one wait waits for, in words: `event ci_finished (key abc123)`, `a timer`. */
export const describeWait = (w: WaitView) => (w.kind === "sleep" ? "a timer" : `event ${w.name}${w.key !== undefined ? ` (key ${w.key})` : ""}`);

/** The waits of a run (a timer, an event), each with when it ends by itself. */
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
          <td>
            {w.kind === "sleep" ? "wakes " : "times out "}
            {isoTime(w.expires_at)}
          </td>
        </tr>
      ))}
    </table>
  );
}
