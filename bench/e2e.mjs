// End to end on local workerd: runs started one at a time through the webhook of the
// app under wrangler dev (every fourth through POST /runs, for comparison), each a two-turn run (the model calls `increment`, then
// answers) against a zero-latency fake model on 127.0.0.1. Timestamps from four
// clocks of this one machine: the client (webhook sent, 202 received), the fake model
// (each request's arrival and answer), the run's row (created_at, updated_at) and the
// run's log lines under wrangler dev (`run_running`/`run_succeeded` carry run_ms since
// created_at). Loopback only, bounded in count and time. `dispatch: "queue"` runs the app with
// MODEL_DISPATCH=queue (wrangler dev's local queue and consumer): compare its phases with direct's.
import { startLocalApp } from "../scripts/demo/local-app.mjs";
import { startLoadModel } from "./load-model.mjs";

const percentile = (xs, p) => {
  const s = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function endToEnd({ runs = 260, warmup = 8, deadlineMs = 90_000, dispatch = "direct" } = {}) {
  const model = await startLoadModel();
  const app = await startLocalApp({
    workerDirs: ["workers", "tests/fixtures/workers"],
    vars: { API_TOKEN: "e2e-token", LOAD_SECRET: "e2e-secret", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "e2e", MODEL_DISPATCH: dispatch },
  });
  const until = Date.now() + deadlineMs;
  const samples = [];
  try {
    for (let seq = 0; seq < warmup + runs && Date.now() < until; seq++) {
      // Every fourth run is started through the API instead (no delivery ledger), to see what the webhook adds.
      const via = seq % 4 === 3 ? "api" : "hook";
      const sent = now();
      const started =
        via === "hook"
          ? await fetch(`${app.url}/hooks/load-hook`, {
              method: "POST",
              headers: { "content-type": "application/json", "X-Webhook-Token": "e2e-secret", "Idempotency-Key": `e2e-${seq}` },
              body: JSON.stringify({ seq }),
            })
          : await fetch(`${app.url}/runs`, {
              method: "POST",
              headers: { "content-type": "application/json", Authorization: "Bearer e2e-token" },
              body: JSON.stringify({ worker: "load", input: { seq } }),
            });
      const accepted = now();
      if (started.status !== 202) throw new Error(`${via} start answered ${started.status}: ${await started.text()}`);
      const answer = await started.json();
      const run_id = answer.run_id ?? answer.id;
      // Wait for the second model request without touching the app, then for the run's end.
      while ((model.timings.get(seq)?.length ?? 0) < 2 && Date.now() < until) await sleep(1);
      let run;
      while (Date.now() < until) {
        run = await (await fetch(`${app.url}/runs/${run_id}`, { headers: { Authorization: "Bearer e2e-token" } })).json();
        if (run.status === "succeeded" || run.status === "failed") break;
        await sleep(2);
      }
      if (run?.status !== "succeeded") throw new Error(`run ${run_id} ended ${run?.status}`);
      if (seq >= warmup)
        samples.push({ seq, via, runId: run_id, sent, accepted, created: run.created_at, finished: run.updated_at, model: model.timings.get(seq) });
    }
  } finally {
    await app.stop();
    await model.close();
  }
  // run id → { running, succeeded } in run_ms, from the run's log lines.
  const logged = new Map();
  for (const m of app.log().matchAll(/\{"edgework":"(run_running|run_succeeded)".*\}/g)) {
    const line = JSON.parse(m[0]);
    logged.set(line.run_id, { ...logged.get(line.run_id), [m[1]]: line.run_ms });
  }
  const rows = samples.map((s) => {
    const [first, second] = s.model;
    const log = logged.get(s.runId) ?? {};
    return {
      via: s.via,
      // The headline figures.
      firstModelRequest: first.arrived - s.sent,
      completion: s.finished - s.sent,
      accepted: s.accepted - s.sent, // the webhook's 202 (overlaps the phases below: the alarm may fire before it is sent)
      // Where the time goes, one timeline: each phase starts where the previous ended.
      toStored: s.created - s.sent, // route: token check, delivery ledger, RPC to the run's object, until its row is written
      alarm: log.run_running ?? null, // row written and alarm set → the alarm handler marks the run running (scheduling + the index flush)
      toFirstRequest: log.run_running === undefined ? null : first.arrived - (s.created + log.run_running), // engine start: journal load, catalog, toolsets, model client → fake model
      toolTurn: second.arrived - first.answered, // answer back, journal write, tool (its state write), journal write, second request
      finish: s.finished - second.answered, // answer back, journal write, outcome recorded, retention alarm set
    };
  });
  const hooked = rows.filter((r) => r.via === "hook");
  const viaApi = rows.filter((r) => r.via === "api");
  const stat = (k, of = hooked) => ({
    p50: percentile(
      of.map((r) => r[k]),
      50,
    ),
    p99: percentile(
      of.map((r) => r[k]),
      99,
    ),
  });
  return {
    dispatch,
    runs: hooked.length,
    apiRuns: viaApi.length,
    warmup,
    firstModelRequest: stat("firstModelRequest"),
    completion: stat("completion"),
    phases: Object.fromEntries(["accepted", "toStored", "alarm", "toFirstRequest", "toolTurn", "finish"].map((k) => [k, stat(k)])),
    api: { toStored: stat("toStored", viaApi), firstModelRequest: stat("firstModelRequest", viaApi), completion: stat("completion", viaApi) },
  };
}

/**
 * What MODEL_DISPATCH=queue adds per model request, p50 and p99 of each mode: the request side
 * (alarm → first request: hand-off, queue, claim) and a whole turn (answer → next request:
 * delivery, wake-up, replay, tool, hand-off, queue, claim), and to the last answer → finished.
 */
export async function dispatchLatency(runs = 200) {
  const direct = await endToEnd({ runs, dispatch: "direct" });
  const queue = await endToEnd({ runs, dispatch: "queue" });
  const phase = (k) => ({ direct: direct.phases[k], queue: queue.phases[k], addedP50: queue.phases[k].p50 - direct.phases[k].p50 });
  return {
    runs: Math.min(direct.runs, queue.runs),
    toFirstRequest: phase("toFirstRequest"),
    toolTurn: phase("toolTurn"),
    finish: phase("finish"),
    completion: { direct: direct.completion, queue: queue.completion },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // node bench/e2e.mjs [runs] [direct|queue|compare]
  const [runs, mode = "direct"] = [Number(process.argv[2] ?? 200), process.argv[3]];
  console.log(JSON.stringify(mode === "compare" ? await dispatchLatency(runs) : await endToEnd({ runs, dispatch: mode }), null, 1));
}
