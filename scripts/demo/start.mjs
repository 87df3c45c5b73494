// `npm start`: the offline demo. Starts everything, sends a signed webhook, prints
// the approval links from the emails, then watches the run until Ctrl-C.
import { startDemo } from "./demo.mjs";

const port = Number(process.env.PORT ?? 8787);
const say = (line) => console.log(`  ${line}`);
console.log("edgework offline demo: GitHub issue triage with approval by email\n");

let demo;
try {
  demo = await startDemo({ port, say });
} catch (err) {
  console.error(`\nThe demo could not start: ${err.message}`);
  if (/address already in use|EADDRINUSE/i.test(String(err.message))) console.error(`Port ${port} is taken: stop what uses it, or run PORT=8788 npm start.`);
  process.exit(1);
}

const shutdown = async () => {
  console.log("\nstopping…");
  await demo.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

console.log(`\nThe run paused: triage wants to write to GitHub. ${demo.approvals.length} approval email(s) went out:\n`);
for (const a of demo.approvals) {
  const what = a.approval ? `${a.approval.args.method} ${a.approval.args.url}` : "";
  console.log(`  ${a.subject}: ${what}\n    to ${a.to}\n    open: ${a.link}\n`);
}
console.log(`Run page:  ${demo.runPage}`);
console.log(`API:       curl -H 'Authorization: Bearer dev-token' ${demo.app.url}/runs/${demo.runId}`);
console.log("\nOpen the links, approve (or reject), and watch the run finish here. Ctrl-C stops everything.\n");

let last = "";
for (;;) {
  const run = await demo.status();
  if (run.status !== last) {
    last = run.status;
    console.log(
      `[${new Date().toLocaleTimeString()}] run ${run.status}${run.output ? `: ${typeof run.output === "string" ? run.output : JSON.stringify(run.output)}` : ""}${run.error ? `: ${run.error.message}` : ""}`,
    );
    if (run.status === "succeeded") {
      const { comments, labels } = demo.github.state;
      for (const c of comments) console.log(`  comment posted to ${c.repo}#${c.issue} (fake GitHub):\n    ${c.body.replace(/\n/g, "\n    ")}`);
      for (const l of labels) console.log(`  labels added to ${l.repo}#${l.issue}: ${l.labels.join(", ")}`);
    }
  }
  await new Promise((r) => setTimeout(r, 500));
}
