// The generated project's `npm start` demo end to end, headless (ci-package-flow.sh
// copies this file into the project and runs it there, so `edgework/client` and the
// demo are the project's): a signed webhook starts triage, the run pauses and its
// approval emails carry links, every approval is granted through edgework/client,
// the run succeeds and the fake GitHub holds the comment.
import { EdgeworkClient } from "edgework/client";
import { API_TOKEN, startDemo } from "./scripts/demo/demo.mjs";

const say = (line) => console.log(`  ${line}`);
const demo = await startDemo({ say });
try {
  const client = new EdgeworkClient({ baseURL: demo.app.url, apiToken: API_TOKEN });
  const paused = await client.runs.get(demo.runId);
  const pending = paused.approvals.filter((a) => a.status === "pending");
  say(`run ${demo.runId} is ${paused.status}: ${pending.map((a) => a.tool).join(", ")}; ${demo.approvals.length} approval email(s)`);
  if (paused.status !== "awaiting_approval" || pending.length === 0 || demo.approvals.length !== pending.length)
    throw new Error("the run did not pause with one approval email per pending approval");
  for (const { link } of demo.approvals) {
    const page = await fetch(link);
    if (page.status !== 200) throw new Error(`the approval link ${link} answered ${page.status}`);
  }
  for (const approval of pending) await client.approvals.decide(demo.runId, approval.id, { decision: "approve", note: "approved by the package flow" });
  const run = await client.runs.wait(demo.runId, { until: ["succeeded"], timeoutMs: 60_000 });
  if (run.status !== "succeeded") throw new Error(`the run ended ${run.status}: ${JSON.stringify(run.error)}`);
  const { comments, labels } = demo.github.state;
  say(`run succeeded: ${typeof run.output === "string" ? run.output : JSON.stringify(run.output)}`);
  if (comments.length !== 1) throw new Error(`the fake GitHub holds ${comments.length} comments, not 1`);
  say(`comment posted to ${comments[0].repo}#${comments[0].issue}; labels added: ${labels.flatMap((l) => l.labels).join(", ")}`);
} finally {
  await demo.stop();
}
