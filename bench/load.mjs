// Load: runs started through the webhook route of the app under wrangler dev,
// `concurrency` at a time, each followed to its end. Loopback only, bounded in
// count and time.
import { startLocalApp } from "../scripts/demo/local-app.mjs";
import { startLoadModel } from "./load-model.mjs";

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};

export async function loadTest({ runs = 1000, concurrency = 50, deadlineMs = 240_000 } = {}) {
  const model = await startLoadModel();
  const app = await startLocalApp({
    workerDirs: ["workers", "tests/fixtures/workers"],
    vars: { API_TOKEN: "load-token", LOAD_SECRET: "load-secret", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "load" },
  });
  const until = Date.now() + deadlineMs;
  const results = [];
  let next = 0;
  const t0 = Date.now();
  try {
    const worker = async () => {
      while (next < runs && Date.now() < until) {
        const seq = next++;
        const sent = Date.now();
        const hook = await fetch(`${app.url}/hooks/load-hook`, {
          method: "POST",
          headers: { "content-type": "application/json", "X-Webhook-Token": "load-secret", "Idempotency-Key": `load-${seq}` },
          body: JSON.stringify({ seq }),
        });
        if (hook.status !== 202) {
          results.push({ seq, status: `hook ${hook.status}` });
          continue;
        }
        const { run_id } = await hook.json();
        const accepted = Date.now() - sent;
        let status = "lost";
        let ms = null;
        while (Date.now() < until) {
          await new Promise((r) => setTimeout(r, 200));
          const run = await (await fetch(`${app.url}/runs/${run_id}`, { headers: { Authorization: "Bearer load-token" } })).json();
          if (run.status === "succeeded" || run.status === "failed") {
            status = run.status === "succeeded" && run.output === `done ${seq}` ? "completed" : "failed";
            // Time to completion: the webhook's answer, then the run's own clock from
            // stored to finished (so the 200 ms polling does not blur it).
            ms = accepted + (run.updated_at - run.created_at);
            break;
          }
        }
        results.push({ seq, run_id, status, ms });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await app.stop();
    await model.close();
  }
  const completed = results.filter((r) => r.status === "completed");
  const duplicated = [...model.perRun.values()].filter((n) => n > 2).length;
  return {
    runs,
    concurrency,
    sent: results.length,
    completed: completed.length,
    failed: results.filter((r) => r.status === "failed" || String(r.status).startsWith("hook")).length,
    lost: results.filter((r) => r.status === "lost").length + (runs - results.length),
    duplicated,
    distinctRunIds: new Set(results.map((r) => r.run_id)).size,
    p50Ms: percentile(
      completed.map((r) => r.ms),
      50,
    ),
    p99Ms: percentile(
      completed.map((r) => r.ms),
      99,
    ),
    wallSeconds: (Date.now() - t0) / 1000,
  };
}
