import type { ApprovalView, RunView } from "../runs/types";
import type { CallNode } from "../engine/journal/call-tree";
import { rolledUpUsage } from "../engine/journal/run-usage";
import { AttachmentList } from "./attachments";
import { ResultView } from "./call-view";
import { ConversationView } from "./conversation-view";
import { AnswerEmailFailures, EmailFailures } from "./email-failures";
import { describeTrigger, isoTime, personOf, prettyArgs, usd } from "./format";
import { Badge, Page } from "./layout";
import { RUN_LIVE_SCRIPT } from "./run-live-script";
import { Waterfall } from "./waterfall";
import { WaitsTable } from "./waits-view";
import { appPath } from "../http/base-path";
import { AttributeList } from "./attributes-view";

/** Each call with its usage and that of the calls under it: the top one's is the run's, as in the summary. */
function CallTree(props: { call: CallNode }) {
  const { call } = props;
  const usage = rolledUpUsage(call);
  return (
    <li>
      <strong>{call.worker}</strong> — {call.turns} turn{call.turns === 1 ? "" : "s"}, {usage.inputTokens + usage.outputTokens} tokens, {usd(usage.costUsd)}
      {call.tools.length ? (
        <ul class="tree">
          {call.tools.map((t) => (
            <li>
              <code>{t.name}</code> <Badge status={t.status} />
              <pre>{prettyArgs(t.args, 600)}</pre>
              {t.edited ? (
                <div class="edited">
                  edited before approval{t.edited.by ? ` by ${personOf(t.edited.by)}` : ""}
                  {t.edited.denied ? `, into arguments a deny rule refuses: not run (${t.edited.denied})` : "; it ran with:"}
                  <pre>{prettyArgs(t.edited.args, 600)}</pre>
                </div>
              ) : null}
              {t.answeredBy ? <div class="edited">not run: answered by a person{t.answeredBy.by ? ` (${personOf(t.answeredBy.by)})` : ""}</div> : null}
              {t.attachments?.length ? <AttachmentList attachments={t.attachments} /> : null}
              {t.error ? <pre>{t.error}</pre> : t.result ? <ResultView text={t.result} /> : null}
              {t.undo && t.undo.status !== "not_made" ? (
                <div class="edited">
                  {t.undo.status === "ok" ? "undone" : "not undone"} by <code>{t.undo.tool}</code> (the run failed)
                  <pre>{prettyArgs(t.undo.args ?? {}, 600)}</pre>
                  {t.undo.error ? <pre>{t.undo.error}</pre> : t.undo.result ? <ResultView text={t.undo.result} /> : null}
                </div>
              ) : null}
              {t.calls.length ? (
                <ul class="tree">
                  {t.calls.map((c) => (
                    <CallTree call={c} />
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** Who decided: the person and the way when one did (`by`), else what did (an expiry, the run's mode). */
function decidedBy(a: ApprovalView): string {
  if (a.by) return ` by ${personOf(a.by)}`;
  return a.decided_by ? ` by ${a.decided_by}` : "";
}

/** The decision on the record: when, on which arguments (their SHA-256, as bound), and what the approver put in the call's place. */
function DecisionRecord(props: { approval: ApprovalView }) {
  const a = props.approval;
  if (a.decided_at === null) return null;
  return (
    <>
      <div>
        at {isoTime(a.decided_at)}
        {a.args_sha256 ? (
          <>
            , on arguments <code>sha256:{a.args_sha256.slice(0, 12)}</code>
          </>
        ) : null}
      </div>
      {a.denied !== null ? <div class="edited">denied after the edit: not run ({a.denied})</div> : null}
      {a.edited_args !== null ? (
        <div>
          {a.denied !== null ? "edited to:" : "edited; ran with:"}
          <pre>{prettyArgs(a.edited_args, 600)}</pre>
        </div>
      ) : null}
      {a.response !== null ? <div>answered in place of the call: “{a.response.length > 600 ? `${a.response.slice(0, 600)}…` : a.response}”</div> : null}
    </>
  );
}

/** Where a worker's history was compacted to fit its model's context, and what the model was sent in its place. */
function Compactions(props: { compactions: RunView["compactions"] }) {
  return (
    <>
      <h2>History compacted ({props.compactions.length})</h2>
      <ul id="compactions" class="tree">
        {props.compactions.map((c) => (
          <li>
            <code>{c.path}</code>, before turn {c.turn} ({isoTime(c.at)}): {c.replaced} earlier messages{" "}
            {c.compact === "summarize" ? `summarized by ${c.model ?? "the worker's model"}` : "dropped (window)"}, ~{c.tokens_before} → ~{c.tokens_after} tokens
            {c.summary !== null ? <pre>{c.summary}</pre> : null}
          </li>
        ))}
      </ul>
    </>
  );
}

/** The run for people: status, call tree, approvals, usage and cost; followed live by its script (refreshing itself without JS). */
export function RunPage(props: { run: RunView; events: string }) {
  const { run } = props;
  const live = run.status === "queued" || run.status === "running";
  return (
    <Page title={`Run ${run.id}`} refresh={live}>
      <h1>
        Run of <code>{run.worker}</code>{" "}
        <span id="run-status" class={`badge ${run.status}`}>
          {run.status.replace(/_/g, " ")}
        </span>
      </h1>
      {/* Shown by the script, which fills it from the event stream. */}
      <section id="live" data-events={props.events} hidden>
        <h2>Live</h2>
        <pre id="streaming"></pre>
        <ul id="activity" class="tree"></ul>
      </section>
      <script dangerouslySetInnerHTML={{ __html: RUN_LIVE_SCRIPT }} />
      <table>
        <tr>
          <th>Run</th>
          <td>
            <code>{run.id}</code>
          </td>
        </tr>
        <tr>
          <th>Started by</th>
          <td>
            {describeTrigger(run.trigger)}, {isoTime(run.created_at)}
          </td>
        </tr>
        <tr>
          <th>Attributes</th>
          <td id="attributes">
            <AttributeList attributes={run.attributes} />
          </td>
        </tr>
        {run.forked_from ? (
          <tr>
            <th>Forked from</th>
            <td>
              run <a href={appPath(`/runs/${encodeURIComponent(run.forked_from.run)}/view`)}>{run.forked_from.run}</a>{" "}
              {run.forked_from.at.includes("/") ? (
                <>
                  before step <code>{run.forked_from.at}</code>
                </>
              ) : (
                "from its start"
              )}
            </td>
          </tr>
        ) : null}
        {run.parent ? (
          <tr>
            <th>Child of</th>
            <td id="parent-run">
              run <a href={appPath(`/runs/${encodeURIComponent(run.parent.run)}/view`)}>{run.parent.run}</a>, started by <code>{run.parent.call_path}</code>
            </td>
          </tr>
        ) : null}
        {run.children.length ? (
          <tr>
            <th>Child runs</th>
            <td id="child-runs">
              {run.children.map((c) => (
                <div>
                  <a href={appPath(`/runs/${encodeURIComponent(c.id)}/view`)}>{c.id}</a> {c.worker}: {c.status}
                </div>
              ))}
            </td>
          </tr>
        ) : null}
        <tr>
          <th>Updated</th>
          <td>{isoTime(run.updated_at)}</td>
        </tr>
        <tr>
          <th>Catalog</th>
          <td>{run.catalog_version ? <code>{run.catalog_version}</code> : "the current one (started before runs were pinned)"}</td>
        </tr>
        <tr>
          <th>edgework</th>
          <td>
            {run.edgework_version ? <code>{run.edgework_version}</code> : "not recorded (started before versions were)"}
            {run.resumed_under ? (
              <>
                , resumed under <code>{run.resumed_under}</code>
              </>
            ) : null}
          </td>
        </tr>
        <tr>
          <th>Usage</th>
          <td>
            {run.usage
              ? `${run.usage.requests} model requests, ${run.usage.inputTokens} input + ${run.usage.outputTokens} output tokens, ${usd(run.usage.costUsd)}`
              : "—"}
          </td>
        </tr>
      </table>
      {/* Shown once a message continued the run: the input and one answer are the run's Input and Output. */}
      {run.messages.length > 2 ? (
        <>
          <h2>Conversation</h2>
          <ConversationView messages={run.messages} />
        </>
      ) : null}
      <AnswerEmailFailures failures={run.answer_email_failures} />
      {run.compactions.length ? <Compactions compactions={run.compactions} /> : null}
      {run.status === "succeeded" ? (
        <>
          <h2>Output</h2>
          <pre>{typeof run.output === "string" ? run.output : prettyArgs(run.output)}</pre>
        </>
      ) : null}
      {run.error ? (
        <>
          <h2>Error</h2>
          <pre>{`${run.error.code}: ${run.error.message}`}</pre>
        </>
      ) : null}
      {run.waits.length ? (
        <>
          <h2>Waiting for</h2>
          <WaitsTable waits={run.waits} />
        </>
      ) : null}
      <h2>Approvals</h2>
      {run.approvals.length ? (
        <table>
          <tr>
            <th>Tool</th>
            <th>Asked by</th>
            <th>Arguments</th>
            <th>Status</th>
          </tr>
          {run.approvals.map((a) => (
            <tr>
              <td>
                <code>{a.tool}</code>
              </td>
              <td>{a.worker_chain.join(" → ")}</td>
              <td>
                <pre>{prettyArgs(a.args, 600)}</pre>
              </td>
              <td>
                <Badge status={a.status} />
                {decidedBy(a)}
                <DecisionRecord approval={a} />
                {a.deciders?.ask ? <div>may decide: {a.deciders.ask.join(", ")}</div> : null}
                {a.note ? <div>“{a.note}”</div> : null}
                {a.answer ? <div>answer: “{a.answer.length > 600 ? `${a.answer.slice(0, 600)}…` : a.answer}”</div> : null}
                <EmailFailures failures={a.email_failures} />
              </td>
            </tr>
          ))}
        </table>
      ) : (
        <p>None.</p>
      )}
      <h2>Timeline</h2>
      {run.timeline.spans.length ? <Waterfall timeline={run.timeline} /> : <p>Nothing has run yet.</p>}
      <h2>Call tree</h2>
      {run.call_tree ? (
        <ul class="tree">
          <CallTree call={run.call_tree} />
        </ul>
      ) : (
        <p>Nothing has run yet.</p>
      )}
    </Page>
  );
}
