// The offline demo: the GitHub-triage flagship, end to end on this machine.
// Fakes for GitHub and the model, the app under wrangler dev, one signed webhook,
// and the approval links from the emails the app sent.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import PostalMime from "postal-mime";
import { startDemoModel } from "./demo-model.mjs";
import { startFakeGitHub } from "./fake-github.mjs";
import { startLocalApp } from "./local-app.mjs";

export const API_TOKEN = "dev-token";
const WEBHOOK_SECRET = "demo-webhook-secret";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @param {{ port?: number, say?: (line: string) => void }} [opts]
 */
export async function startDemo(opts = {}) {
  const say = opts.say ?? (() => {});
  const stops = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const github = await startFakeGitHub({ token: "demo-github-token" });
    stops.push(github.close);
    const model = await startDemoModel();
    stops.push(model.close);
    say(`fake GitHub API on ${github.url}, demo model on ${model.url}`);
    const app = await startLocalApp({
      port: opts.port,
      vars: {
        API_TOKEN,
        DEFAULT_MODEL: "openai:demo",
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: "demo-key",
        // The allow-list names the port: a bare host allows only 80/443.
        GITHUB_API_HOST: new URL(github.url).host,
        GITHUB_TOKEN: "demo-github-token",
        GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
        APPROVAL_FROM: "edgework@example.com",
        APPROVER_EMAIL: "maintainer@example.com",
        APPROVAL_SECRET: randomBytes(32).toString("hex"),
      },
    });
    stops.push(app.stop);
    say(`edgework on ${app.url} (wrangler dev, local workerd)`);

    const payload = JSON.stringify({
      action: "opened",
      issue: {
        number: 42,
        title: "App crashes when saving an empty note",
        body: "Steps: open the app, create a note, leave it empty, press save. The app crashes with a TypeError.",
        url: `${github.url}/repos/octo-org/notes-app/issues/42`,
      },
      repository: { full_name: "octo-org/notes-app" },
    });
    const delivery = randomUUID();
    const hook = await fetch(`${app.url}/hooks/github-issues`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(payload).digest("hex")}`,
      },
      body: payload,
    });
    if (hook.status !== 202) throw new Error(`the webhook was refused: ${hook.status} ${await hook.text()}`);
    const { run_id: runId } = await hook.json();
    say(`sent a signed GitHub "issues opened" webhook (delivery ${delivery}) → run ${runId}`);

    /** @returns {Promise<any>} the run, as GET /runs/:id shows it */
    const status = async () => (await fetch(`${app.url}/runs/${runId}`, { headers: { Authorization: `Bearer ${API_TOKEN}` } })).json();
    let run;
    for (let i = 0; i < 240; i++) {
      run = await status();
      if (!["queued", "running"].includes(run.status)) break;
      await sleep(250);
    }
    if (run.status !== "awaiting_approval") throw new Error(`the run did not pause for approval: ${run.status} ${JSON.stringify(run.error)}`);

    const pending = run.approvals.filter((a) => a.status === "pending");
    let mails = [];
    for (let i = 0; i < 40 && mails.length < pending.length; i++) {
      mails = await Promise.all((await app.emails()).map((raw) => PostalMime.parse(raw)));
      if (mails.length < pending.length) await sleep(250);
    }
    const approvals = mails.map((mail) => {
      const link = /href="([^"]+)\?intent=approve"/.exec(mail.html ?? "")?.[1];
      if (!link) throw new Error("an approval email without a link");
      const approval = pending.find((a) => link.includes("/approvals/") && mail.text?.includes(a.args?.url ?? "\u0000"));
      return { subject: mail.subject, to: mail.to?.[0]?.address, link, approval };
    });
    const token = approvals[0].link.split("/approvals/")[1];
    return { app, github, model, runId, status, approvals, runPage: `${app.url}/runs/${runId}/view?token=${token}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
