import type { PendingApprovalItem, RunListItem, RunQuery } from "../runs/index-types";
import { CallView } from "./call-view";
import { isoTime, personOf, usd } from "./format";
import { Badge, Page } from "./layout";
import { LogoutForm } from "./login-page";
import type { CallDescription } from "../engine/types/toolset";
import { appPath } from "../http/base-path";
import { RUN_STATUSES, type ApprovalView, type EmailFailureView, type WaitView } from "../runs/types";
import { EmailFailures } from "./email-failures";
import { describeWait } from "./waits-view";
import { AttributeList } from "./attributes-view";

export interface InboxApproval extends PendingApprovalItem {
  args?: unknown;
  call?: CallDescription;
  /** Its emails that were not delivered, and why (read from its run with its arguments). */
  emailFailures?: EmailFailureView[];
  /** Where a person decides it: its approval page (a link signed for them), else the run page. */
  decideLink: string;
  /** Its approver may edit the call or answer in its place (on its approval page, opened at those forms). */
  editable?: boolean;
}

/** A decided approval of a recent run, with its audit (`GET /runs/:id` has the same). */
export interface RecentDecision {
  run_id: string;
  approval: ApprovalView;
}

/** What the decision did to the call, in words: approved (as asked or edited; an edit a deny rule refused), rejected, answered, expired. */
function outcomeOf(a: ApprovalView): string {
  if (a.kind === "question") return a.status === "approved" ? "answered" : a.status;
  if (a.denied !== null) return "edited, then denied by a rule";
  if (a.status === "approved" && a.edited_args !== null) return "approved, edited";
  return a.status === "responded" ? "answered in place of the call" : a.status;
}

/** Who decided and the way (`via`: link, reply, inbox, access, api); what decided when no person did (an expiry, the run's mode). */
const whoOf = (a: ApprovalView) => (a.by ? personOf(a.by) : (a.decided_by ?? "—"));

const ago = (ms: number, now: number) => {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : s < 172_800 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86_400)} days`;
};

/** What waits for a person, then recent runs with filters (a GET form: filtering changes nothing). */
export function InboxPage(props: {
  who: string;
  csrf: string | null;
  approvals: InboxApproval[];
  truncated: boolean;
  runs: RunListItem[];
  /** Decisions of the most recent runs, newest first, with their audit; default none. */
  decided?: RecentDecision[];
  /** Runs `waiting` (for a timer, an event or an answer: the newest), with what each waits for; default none. */
  waiting?: Array<{ run: RunListItem; waits: WaitView[] }>;
  filter: Pick<RunQuery, "status" | "worker" | "trigger" | "attributes">;
  now: number;
}) {
  const { now, filter, waiting = [], decided = [] } = props;
  // The form shows the first attribute criterion to edit; the others ride along unseen until cleared.
  const [shown, ...kept] = Object.entries(filter.attributes ?? {});
  return (
    <Page title="edgework inbox">
      <nav>
        <strong>edgework</strong>
        <a href={appPath("/inbox")}>Inbox</a>
        <span>Signed in: {props.who}</span>
        {props.csrf ? <LogoutForm csrf={props.csrf} /> : null}
      </nav>
      <h1>
        Waiting for a decision ({props.approvals.length}
        {props.truncated ? "+" : ""})
      </h1>
      {props.approvals.length ? (
        <table id="pending">
          <tr>
            <th>Call</th>
            <th>Asked by</th>
            <th>Age</th>
            <th>Expires</th>
            <th></th>
          </tr>
          {props.approvals.map((a) => (
            <tr>
              <td>
                <code>{a.tool}</code> in run <a href={appPath(`/runs/${encodeURIComponent(a.run_id)}/view`)}>{a.run_id.slice(0, 8)}</a>
                {a.args !== undefined ? <CallView call={a.call} args={a.args} max={1200} /> : null}
                {a.emailFailures ? <EmailFailures failures={a.emailFailures} /> : null}
              </td>
              <td>{a.worker_chain.join(" → ")}</td>
              <td>{ago(a.created_at, now)}</td>
              <td>{isoTime(a.expires_at)}</td>
              <td>
                <a href={a.decideLink}>Decide</a>
                {a.editable && a.decideLink.includes("/approvals/") ? (
                  <>
                    {" · "}
                    <a href={`${a.decideLink}?intent=edit`}>Edit or answer</a>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </table>
      ) : (
        <p>Nothing waits for a decision.</p>
      )}
      <h2>Recently decided ({decided.length})</h2>
      {decided.length ? (
        <table id="decided">
          <tr>
            <th>Call</th>
            <th>Decision</th>
            <th>By</th>
            <th>When</th>
            <th>On arguments</th>
          </tr>
          {decided.map(({ run_id, approval: a }) => (
            <tr>
              <td>
                <code>{a.tool}</code> in run <a href={appPath(`/runs/${encodeURIComponent(run_id)}/view`)}>{run_id.slice(0, 8)}</a>
              </td>
              <td>
                {outcomeOf(a)}
                {a.note ? ` — “${a.note.length > 200 ? `${a.note.slice(0, 200)}…` : a.note}”` : ""}
              </td>
              <td>{whoOf(a)}</td>
              <td>{isoTime(a.decided_at)}</td>
              <td>{a.args_sha256 ? <code>sha256:{a.args_sha256.slice(0, 12)}</code> : "—"}</td>
            </tr>
          ))}
        </table>
      ) : (
        <p>No decision in the recent runs.</p>
      )}
      <h2>Waiting for a timer, an event or an answer ({waiting.length})</h2>
      {waiting.length ? (
        <table id="waiting">
          <tr>
            <th>Run</th>
            <th>Worker</th>
            <th>Waits for</th>
            <th>Ends</th>
          </tr>
          {waiting.map(({ run, waits }) => (
            <tr>
              <td>
                <a href={appPath(`/runs/${encodeURIComponent(run.id)}/view`)}>
                  <code>{run.id.slice(0, 8)}</code>
                </a>
              </td>
              <td>{run.worker}</td>
              <td>{waits.map(describeWait).join(", ") || "—"}</td>
              <td>{waits.length ? isoTime(Math.min(...waits.map((w) => w.expires_at))) : "—"}</td>
            </tr>
          ))}
        </table>
      ) : (
        <p>No run waits for a timer, an event or an answer.</p>
      )}
      <h2>Recent runs</h2>
      <form method="get" action={appPath("/inbox")}>
        <select name="status">
          <option value="">any status</option>
          {RUN_STATUSES.map((s) => (
            <option value={s} selected={filter.status === s}>
              {s.replace(/_/g, " ")}
            </option>
          ))}
        </select>{" "}
        <input name="worker" placeholder="worker" value={filter.worker ?? ""} />{" "}
        <input name="trigger" placeholder="trigger (api, webhook, a name)" value={filter.trigger ?? ""} />{" "}
        <input name="attribute" placeholder="attribute (repo=acme/api)" value={shown ? `${shown[0]}=${shown[1]}` : ""} />{" "}
        {kept.map(([name, value]) => (
          <input type="hidden" name={`attr.${name}`} value={value} />
        ))}
        <button type="submit" class="approve">
          Filter
        </button>
      </form>
      {props.runs.length ? (
        <table id="runs">
          <tr>
            <th>Run</th>
            <th>Worker</th>
            <th>Status</th>
            <th>Trigger</th>
            <th>Attributes</th>
            <th>Started</th>
            <th>Cost</th>
          </tr>
          {props.runs.map((r) => (
            <tr>
              <td>
                <a href={appPath(`/runs/${encodeURIComponent(r.id)}/view`)}>
                  <code>{r.id.slice(0, 8)}</code>
                </a>
              </td>
              <td>{r.worker}</td>
              <td>
                <Badge status={r.status} />
              </td>
              <td>
                {r.trigger.kind === "fork" && r.trigger.name ? (
                  <>
                    fork of <a href={appPath(`/runs/${encodeURIComponent(r.trigger.name)}/view`)}>{r.trigger.name.slice(0, 8)}</a>
                  </>
                ) : r.trigger.name ? (
                  `${r.trigger.kind} ${r.trigger.name}`
                ) : (
                  r.trigger.kind
                )}
              </td>
              <td>
                <AttributeList attributes={r.attributes} />
              </td>
              <td>{isoTime(r.created_at)}</td>
              <td>{r.usage ? usd(r.usage.costUsd) : "—"}</td>
            </tr>
          ))}
        </table>
      ) : (
        <p>No runs{filter.status || filter.worker || filter.trigger || shown ? " match these filters" : ""}.</p>
      )}
    </Page>
  );
}
