// `npm run bench`: measures edgework and writes BENCHMARKS.md. Every number comes
// from this run on this machine; nothing is hard-coded but the published prices.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { endToEnd } from "../bench/e2e.mjs";
import { loadTest } from "../bench/load.mjs";
import { topFrames } from "../bench/profile-top.mjs";
import { yamlCost } from "../bench/yaml-cost.mjs";
import { liveTextCases, liveTextSection } from "../bench/live-text-cost.mjs";
import { firstToSaturate, saturation, scaleSection } from "../bench/scale.mjs";
import { PRICES as UNIT_PRICES, priceRun, RENEW_EVERY_SECONDS } from "../bench/pricing.mjs";
import { importTs, root } from "../cli/import-ts.mjs";
import { totalUpload } from "./wrangler-upload.mjs";
import { BUNDLE_BUDGET_KIB } from "./bundle-budget.mjs";

process.chdir(root);
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const started = Date.now();
const log = (s) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${s}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 3) => (n === null || n === undefined ? "—" : Number(n).toFixed(d));

// Durable Objects on the Workers Paid plan, developers.cloudflare.com/durable-objects/platform/pricing/
// (read 2026-11-22): requests $0.15/million, duration $12.50/million GB-s (128 MB per object),
// SQLite rows written $1.00/million, rows read $0.001/million (beyond the included amounts).
const PRICES = { requestPerM: 0.15, gbSecondPerM: 12.5, rowWrittenPerM: 1.0, rowReadPerM: 0.001, objectGb: 0.128 };
// Wall time a model request keeps the object active (an assumption: real models take ~1 s per turn).
const MODEL_SECONDS = 1.0;

log("engine overhead (in-process, interleaved)…");
const { engineOverhead, TURN_COUNTS, TOOLS_PER_TURN, BARE, EDGEWORK, AI_SDK } = await importTs(
  "bench-overhead",
  `export { engineOverhead, TURN_COUNTS, TOOLS_PER_TURN, BARE, EDGEWORK, AI_SDK } from "./bench/engine-overhead";`,
);
const overhead = await engineOverhead(300, 50);
const [SHORT, LONG] = TURN_COUNTS;
const perTurn = (name, turns) => overhead.find((o) => o.name === name && o.turns === turns).medianMsPerTurn;
const names = [...new Set(overhead.map((o) => o.name))];
const ratios = {
  overBare: perTurn(EDGEWORK, SHORT) / perTurn(BARE, SHORT),
  overAiSdk: perTurn(EDGEWORK, SHORT) / perTurn(AI_SDK, SHORT),
  flatness: Object.fromEntries(names.map((n) => [n, perTurn(n, LONG) / perTurn(n, SHORT)])),
};

log("tracing cost (in-process)…");
const { traceCost } = await importTs("bench-trace-cost", `export { traceCost } from "./bench/trace-cost";`);
const trace = await traceCost(400);

log("engine profile (node --cpu-prof, 5000 runs of 10 turns)…");
const profDir = mkdtempSync(join(tmpdir(), "edgework-prof-"));
const profiled = execFileSync("node", ["--cpu-prof", "--cpu-prof-dir", profDir, "bench/profile-engine.mjs", "10", "5000"], { encoding: "utf8" }).trim();
const profile = topFrames(
  join(
    profDir,
    readdirSync(profDir).find((f) => f.endsWith(".cpuprofile")),
  ),
  12,
);

log("Durable Object storage, resume and faults (Workers pool)…");
const pool = spawnSync("node_modules/.bin/vitest", ["run", "--config", "vitest.bench.config.ts"], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const results = Object.fromEntries(
  [...(pool.stdout + pool.stderr).matchAll(/BENCH_RESULT (\{.*\})/g)].map((m) => {
    const r = JSON.parse(m[1]);
    return [r.section, r.data];
  }),
);
const dispatchWaits = ["dispatch_wait_direct", "dispatch_wait_queue", "dispatch_recovery"];
if (
  !results.storage ||
  !results.resume ||
  !results.faults ||
  !results.retention ||
  !results.dispatch_direct ||
  !results.dispatch_queue ||
  !results.waits ||
  !results.live_text ||
  !results.flow ||
  !results.notify ||
  !results.scale ||
  dispatchWaits.some((s) => !results[s])
) {
  console.error(pool.stdout.slice(-4000), pool.stderr.slice(-4000));
  throw new Error("the Durable Object benchmarks failed");
}
// A measurement that misses its goal (say one fault run with an effect twice) is reported, not hidden.
if (pool.status !== 0)
  log(
    `the Durable Object benchmarks measured but missed a goal (see the faults row):\n${(pool.stdout + pool.stderr).match(/AssertionError[^\n]*/)?.[0] ?? ""}`,
  );
const faultMisses = results.faults.misses ?? [];
const faultsQueueText = (q = results.faultsQueue) =>
  q
    ? `${q.completed}, ${q.effectsExactlyOnce}, ${q.modelRequestsExactlyOnce} of ${q.runs} (${q.byMode.throw} thrown, ${q.byMode.abort} aborted)`
    : "not measured (see the bench-queue project's output)";
const missText = faultMisses
  .map(
    (m) =>
      `run ${m.run} (${m.mode} at journal size ${m.atJournalSize}: ${Object.entries(m.effects)
        .filter(([, n]) => n !== 1)
        .map(([e, n]) => `${e} ×${n}`)
        .join(", ")})`,
  )
  .join("; ");

log("bundle (wrangler deploy --dry-run)…");
const out = mkdtempSync(join(tmpdir(), "edgework-bundle-"));
const upload = totalUpload(
  execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", out, "--metafile", join(out, "meta.json")], { env, encoding: "utf8" }),
);
// Named after wrangler.toml's main (src/index.ts).
const bundled = join(out, "index.js");
const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8"));
// The bundle's own entry (the source map beside it lists no inputs).
const inputs = Object.entries(meta.outputs).find(([file]) => /(^|\/)index\.js$/.test(file))[1].inputs;
const byPackage = {};
for (const [file, info] of Object.entries(inputs)) {
  const tail = file.includes("node_modules/") ? file.split("node_modules/").pop() : null;
  const name = tail
    ? tail
        .split("/")
        .slice(0, tail.startsWith("@") ? 2 : 1)
        .join("/")
    : file.split("/").slice(0, 2).join("/");
  byPackage[name] = (byPackage[name] ?? 0) + info.bytesInOutput;
}
const top = Object.entries(byPackage)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 6);
// The whole upload as wrangler reports it (what the platform's limit counts).
const bundle = { rawKiB: upload.rawKiB, gzipKiB: upload.gzipKiB, top };

log("startup (module evaluation and first request, 9 fresh processes)…");
const probes = Array.from({ length: 9 }, () => JSON.parse(execFileSync("node", ["bench/startup-probe.mjs", bundled], { encoding: "utf8" })));
const startup = { evalMs: median(probes.map((p) => p.evalMs)), firstRequestMs: median(probes.map((p) => p.firstRequestMs)) };
log("what runtime YAML would add (yaml bundled alone, 7 fresh processes)…");
const yaml = await yamlCost(root);

log("end to end (wrangler dev, 200 two-turn runs through the webhook, one at a time)…");
const e2e = await endToEnd({ runs: 260, dispatch: "direct" });
log("end to end again with MODEL_DISPATCH=queue (200 runs)…");
const e2eQueue = await endToEnd({ runs: 200, dispatch: "queue" });
const addedP50 = (phase) => e2eQueue.phases[phase].p50 - e2e.phases[phase].p50;

// A run of 10 model requests priced both ways at three model latencies, from the Workers pool's counts.
const LATENCIES = [1, 10, 60];
const dispatchPrices = LATENCIES.map((s) => ({
  seconds: s,
  direct: priceRun({ mode: "direct", modelRequests: results.dispatch_direct.modelRequests, modelSeconds: s, measured: results.dispatch_direct }),
  queue: priceRun({ mode: "queue", modelRequests: results.dispatch_queue.modelRequests, modelSeconds: s, measured: results.dispatch_queue }),
}));

log("load (wrangler dev, 1000 runs through the webhook, 50 at a time)…");
const load = await loadTest({ runs: 1000, concurrency: 50 });

log("bulk cancel (wrangler dev, 1000 matching runs and 100 others, the app restarted mid-way)…");
const { bulkCancel } = await import("../bench/bulk-cancel.mjs");
const bulk = await bulkCancel({ runs: 1000, others: 100, restartAfter: 300, say: log });

// Live text in queue mode (section 8): each case's median, priced, and what it adds to the run without it.
const liveText = liveTextCases(results.live_text);
const liveLongest = Math.max(...liveText.map((c) => c.seconds));
const liveCase = (watcher) => liveText.find((c) => c.seconds === liveLongest && c.watcher === watcher);

// Price of a 10-turn run with one approval, from the measured counts.
const ten = results.storage.tenTurnRunWithApproval;
const activeSeconds = 11 * MODEL_SECONDS; // 10 tool turns + the final answer; paused time is free (hibernated; its one alarm waits for the approval's expiry)
const price = {
  requests: ten.requests,
  rowsWritten: ten.rowsWritten,
  rowsRead: ten.rowsRead,
  gbSeconds: activeSeconds * PRICES.objectGb,
};
const usd =
  (price.requests * PRICES.requestPerM +
    price.gbSeconds * PRICES.gbSecondPerM +
    price.rowsWritten * PRICES.rowWrittenPerM +
    price.rowsRead * PRICES.rowReadPerM) /
  1e6;

const machine = `${cpus()[0]?.model ?? "unknown CPU"} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
const rows = [
  [
    `engine: µs per turn at ${SHORT} / ${LONG} turns (median)`,
    names.map((n) => `${n} ${fmt(perTurn(n, SHORT) * 1000, 1)} / ${fmt(perTurn(n, LONG) * 1000, 1)}`).join(" · "),
  ],
  [`engine at ${SHORT} turns: edgework ÷ bare loop (goal ≤ 5×), edgework ÷ AI SDK (goal ≤ 0.1×)`, `${fmt(ratios.overBare, 1)}×, ${fmt(ratios.overAiSdk, 3)}×`],
  [`engine: per-turn cost at ${LONG} ÷ at ${SHORT} turns (1 = flat)`, names.map((n) => `${n} ${fmt(ratios.flatness[n], 2)}`).join(" · ")],
  [
    "rows written per model turn / tool call / approval / fixed per run",
    `${results.storage.rowsWrittenPerTurn} / ${results.storage.rowsWrittenPerTool} / ${results.storage.rowsWrittenPerApproval} / ${results.storage.rowsWrittenFixedPerRun}`,
  ],
  ["10-turn run + 1 approval: requests, alarms, rows written, rows read", `${ten.requests}, ${ten.alarmsSet}, ${ten.rowsWritten}, ${ten.rowsRead}`],
  ["paused run holds an alarm", String(ten.pausedHoldsAlarm)],
  [
    "approval with expiry: rows written decided / expired; alarms set per pause, per approval decided / expired",
    `${results.storage.rowsWrittenPerApproval} / ${results.storage.rowsWrittenPerExpiredApproval}; ${results.storage.alarmsSetPerPause}, ${results.storage.alarmsPerApproval} / ${results.storage.alarmsPerExpiredApproval}`,
  ],
  [
    "retention: a finished 10-turn run + 1 approval, bytes / rows before → after its retention alarm",
    `${results.retention.before.bytes} / ${results.retention.before.rows} → ${results.retention.after.bytes} / ${results.retention.after.rows}`,
  ],
  [
    "run index per run: reports (requests to RunIndexDO), rows written there",
    `${results.retention.index.reportsPerRun}, ${results.retention.index.rowsWrittenPerRun}`,
  ],
  [
    "scale: first object to saturate, run starts/s (one index → sharded)",
    [saturation(results.scale.before), saturation(results.scale.after, { share: results.scale.shardMaxShare })]
      .map((rows) => firstToSaturate(rows))
      .map((f) => (f ? `${f.kind} ${fmt(f.saturatesAt, 0)}` : "none"))
      .join(" → "),
  ],
  ["price of that run (MODEL_DISPATCH=direct, 1 s per model request)", `$${usd.toFixed(8)} (≈ $${(usd * 1e6).toFixed(0)} per million runs)`],
  ["resume: steps → rows read, ms", results.resume.map((r) => `${r.steps} → ${r.rowsRead}, ${r.ms}`).join(" · ")],
  [
    "run of 10 model requests, USD per million runs at 1 / 10 / 60 s per model request: direct vs queue",
    dispatchPrices.map((p) => `${p.seconds} s: $${(p.direct.usd * 1e6).toFixed(0)} vs $${(p.queue.usd * 1e6).toFixed(0)}`).join(" · "),
  ],
  [
    `live text, queue mode: a ${liveLongest} s answer's forwards and USD added per million runs, no page open / a page open`,
    `${liveCase("unwatched").forwards}, +$${fmt(liveCase("unwatched").addedUsd * 1e6, 2)} / ${liveCase("watched").forwards}, +$${fmt(liveCase("watched").addedUsd * 1e6, 2)}`,
  ],
  [
    "MODEL_DISPATCH=queue: latency added per model request, p50 (alarm → first request / a whole tool turn)",
    `+${fmt(addedP50("toFirstRequest"), 1)} ms / +${fmt(addedP50("toolTurn"), 1)} ms (goal ≤ 100 ms)`,
  ],
  [
    `bundle: wrangler's Total Upload raw / gzip (goal ≤ ${BUNDLE_BUDGET_KIB} KiB gzip, scripts/bundle-budget.mjs)`,
    `${fmt(bundle.rawKiB, 0)} KiB / ${fmt(bundle.gzipKiB, 0)} KiB`,
  ],
  ["startup: module evaluation / first request (catalog load)", `${fmt(startup.evalMs, 1)} ms / ${fmt(startup.firstRequestMs, 1)} ms`],
  [
    "YAML parsed at build time: what runtime YAML would add (bundle gzip; evaluation + catalog parse)",
    `+${fmt(yaml.gzipKiB, 1)} KiB; +${fmt(yaml.evalMs + yaml.yamlParseMs - yaml.jsonParseMs, 1)} ms`,
  ],
  [
    "end to end, webhook → first model request p50 / p99",
    `${fmt(e2e.firstModelRequest.p50, 1)} ms / ${fmt(e2e.firstModelRequest.p99, 1)} ms (${e2e.runs} runs, one at a time)`,
  ],
  ["end to end, webhook → two-turn run finished p50 / p99", `${fmt(e2e.completion.p50, 1)} ms / ${fmt(e2e.completion.p99, 1)} ms`],
  ["load: completed / failed / lost / duplicated", `${load.completed} / ${load.failed} / ${load.lost} / ${load.duplicated} of ${load.runs}`],
  ["load: time to completion p50 / p99", `${load.p50Ms} ms / ${load.p99Ms} ms (${fmt(load.wallSeconds, 1)} s for all)`],
  [
    "faults: runs completed, effects once, model requests once",
    `${results.faults.completed}, ${results.faults.effectsExactlyOnce}, ${results.faults.modelRequestsExactlyOnce} of ${results.faults.runs} (${results.faults.byMode.throw} thrown, ${results.faults.byMode.abort} aborted)${faultMisses.length ? `; not once: ${missText}` : ""}`,
  ],
  ["faults, MODEL_DISPATCH=queue: completed, effects once, model requests once", faultsQueueText()],
];
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`\nedgework benchmarks — ${new Date().toISOString().slice(0, 10)} — ${machine}\n`);
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);

const md = `# Benchmarks

Generated by \`npm run bench\` (scripts/bench.mjs) on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC.
Machine: ${machine}. Total time: ${((Date.now() - started) / 1000).toFixed(0)} s. Nothing here is hard-coded but the published prices.

| measure | result |
|---|---|
${rows.map(([k, v]) => `| ${k} | ${v} |`).join("\n")}

## 1. Engine overhead

The same workload — runs of ${SHORT} and ${LONG} turns, ${TOOLS_PER_TURN} tool calls per turn, trivial tools, a zero-latency scripted
model — through edgework's engine (\`executeRun\` on the in-memory journal), \`@openai/agents\` (\`Runner.run\` with a
scripted \`Model\`, tracing off), the \`ai\` SDK (\`generateText\` with \`MockLanguageModelV3\`) and a bare hand-written loop
(plain JS: the message list, \`JSON.parse\` and a zod \`safeParse\` of every call's arguments, no journal) as the floor, in one
Node process, interleaved (the order rotates every repetition); ${overhead.find((o) => o.turns === SHORT).runs} measured runs at ${SHORT} turns,
${overhead.find((o) => o.turns === LONG).runs} at ${LONG} (bench/engine-overhead.ts). Per turn = the run's time ÷ its tool turns.

| implementation | µs per turn, ${SHORT} turns (median / p90) | µs per turn, ${LONG} turns (median / p90) | ${LONG} ÷ ${SHORT} |
|---|---|---|---|
${names
  .map((n) => {
    const [a, b] = TURN_COUNTS.map((t) => overhead.find((o) => o.name === n && o.turns === t));
    return `| ${n} | ${fmt(a.medianMsPerTurn * 1000, 1)} / ${fmt(a.p90MsPerTurn * 1000, 1)} | ${fmt(b.medianMsPerTurn * 1000, 1)} / ${fmt(b.p90MsPerTurn * 1000, 1)} | ${fmt(ratios.flatness[n], 2)} |`;
  })
  .join("\n")}

At ${SHORT} turns edgework costs **${fmt(ratios.overBare, 1)}× the bare loop** (goal ≤ 5×) and **${fmt(ratios.overAiSdk, 3)}× the AI SDK** (goal ≤ 0.1×).
edgework's number includes journaling every model response and tool result (each step's JSON made once, size-checked
and written to the memory store as text, as the SQLite store writes it), building each call's ToolContext (its
SHA-256 idempotency key is computed only when a tool reads it) and the toolset wrappers (journal, approval gate, combined); the others do none of that.

Where edgework's time goes: \`node --cpu-prof bench/profile-engine.mjs 10 5000\` (${profiled}), top self time
(module loading left out; read with \`node bench/profile-top.mjs <file>.cpuprofile\`):

| self time | frame |
|---|---|
${profile.map((f) => `| ${fmt(f.percent, 1)}% | \`${f.frame}\` |`).join("\n")}

## 2. Storage and requests (Durable Objects, measured in the Workers pool)

From the SQL cursors' \`rowsWritten\`/\`rowsRead\`, by difference between scripted runs (bench/do/storage.bench.test.ts);
only the run's own calls are counted (start, alarms, the decision), not the status reads of a watcher.

- rows written: **${results.storage.rowsWrittenPerTurn} per model turn, ${results.storage.rowsWrittenPerTool} per tool call, ${results.storage.rowsWrittenPerApproval} per approval**
  (the approval row, its approval_requested event, the notification step, the pause event, the decision step: the approval's
  status and the run's are read from that step, never written back); an approval nobody decides, resolved as
  a rejection by the alarm at its expiry: **${results.storage.rowsWrittenPerExpiredApproval} rows**; **${results.storage.rowsWrittenFixedPerRun} fixed per run**
  (the run row, written once, and its queued, running and ending events: the outcome lives in the ending event)
- alarms: **${results.storage.alarmsSetPerPause} set per pause** (at the earliest pending expiry), ${results.storage.alarmsPerApproval} per approval decided (the pause's, then the decision's wake-up),
  ${results.storage.alarmsPerExpiredApproval} per approval that expires (the pause's alarm fires at the expiry)
- rows read per resume of a one-tool run: ${results.storage.rowsReadPerResume} (the journal is read with one query per activation)
- a 10-turn run (one tool call per turn) with one approval: **${ten.requests} Durable Object requests** (start, two alarms, the decision),
  ${ten.alarmsSet} alarms set, ${ten.rowsWritten} rows written, ${ten.rowsRead} rows read; while paused it holds **one alarm**, at the approval's expiry: ${ten.pausedHoldsAlarm}

Priced with the published Workers Paid unit prices (developers.cloudflare.com/durable-objects/platform/pricing/, read
2026-11-22: requests $0.15/M, duration $12.50/M GB-s at 128 MB, rows written $1.00/M, rows read $0.001/M), assuming each
of the 11 model requests keeps the object active ${MODEL_SECONDS} s (paused time costs nothing: the object hibernates until a decision or its expiry alarm):

| unit | count | USD |
|---|---|---|
| requests | ${price.requests} | ${fmt((price.requests * PRICES.requestPerM) / 1e6, 8)} |
| duration | ${fmt(price.gbSeconds, 3)} GB-s | ${fmt((price.gbSeconds * PRICES.gbSecondPerM) / 1e6, 8)} |
| rows written | ${price.rowsWritten} | ${fmt((price.rowsWritten * PRICES.rowWrittenPerM) / 1e6, 8)} |
| rows read | ${price.rowsRead} | ${fmt((price.rowsRead * PRICES.rowReadPerM) / 1e6, 8)} |
| **total** | | **${fmt(usd, 8)}** (≈ $${(usd * 1e6).toFixed(0)} per million runs, before included amounts) |

Duration dominates: it is the model's latency, not the engine's. Model tokens are billed by the model provider, not here.

## 3. Resume cost against run length

Runs of N journal steps (4 GET tool calls per turn), paused on an approval and resumed; the resume activation measured alone:

| steps | rows read | rows written | ms |
|---|---|---|---|
${results.resume.map((r) => `| ${r.steps} | ${r.rowsRead} | ${r.rowsWritten} | ${r.ms} |`).join("\n")}

Rows read grow as steps + ${results.resume[0].rowsRead - results.resume[0].steps}: linear, one read per recorded step, not quadratic.

## 4. Bundle and startup

\`wrangler deploy --dry-run --outdir\`, the whole upload as wrangler reports it (\`Total Upload\`): **${fmt(bundle.rawKiB, 0)} KiB raw, ${fmt(bundle.gzipKiB, 0)} KiB gzip** (goal ≤ ${BUNDLE_BUDGET_KIB} KiB gzip, scripts/bundle-budget.mjs; the platform allows 3 MB on Free, 10 MB on Paid, compressed). The app is built as a scaffolded project builds it: no \`[alias]\`. Largest parts (minified bytes in the bundle):

| part | KiB |
|---|---|
${bundle.top.map(([k, v]) => `| ${k} | ${fmt(v / 1024, 1)} |`).join("\n")}

Startup, measured by evaluating the deployable bundle in a fresh Node process (V8, as in workerd; \`cloudflare:*\` stubbed),
median of 9: module evaluation **${fmt(startup.evalMs, 1)} ms**, first request (loads and checks the catalog) **${fmt(startup.firstRequestMs, 1)} ms**.

Worker files, triggers.yaml and models.yaml are parsed and checked at build time and bundled as JSON (scripts/bundle-workers.mjs),
so \`yaml\` is not in the deployed bundle. What parsing them at runtime would add, measured now (bench/yaml-cost.mjs: \`yaml\`
bundled alone with esbuild, minified; median of 7 fresh Node processes):

| | with runtime YAML (before) | JSON bundled (now) |
|---|---|---|
| \`yaml\` in the bundle | ${fmt(yaml.rawKiB, 1)} KiB raw, ${fmt(yaml.gzipKiB, 1)} KiB gzip | 0 |
| its module evaluation | ${fmt(yaml.evalMs, 1)} ms | 0 |
| parsing this catalog's ${yaml.files} files on the first request | ${fmt(yaml.yamlParseMs, 1)} ms (\`yaml\` cold) | ${fmt(yaml.jsonParseMs, 2)} ms (\`JSON.parse\`) |

## 5. End to end

\`wrangler dev\` (local workerd) on 127.0.0.1 with a zero-latency OpenAI-compatible fake model: two-turn runs (the model calls
the \`counter\` tool, then answers) started one at a time, ${e2e.runs} through \`POST /hooks/load-hook\` and ${e2e.apiRuns} through \`POST /runs\`,
after ${e2e.warmup} warm-up runs (bench/e2e.mjs). Timestamps, all from this machine's clock: the client's (webhook sent, 202 received), the fake
model's (each request's arrival and answer), the run's row (\`created_at\`, \`updated_at\` at the end) and the run's log lines under
\`wrangler dev\` (\`run_running\` carries ms since \`created_at\`).

| from webhook sent | p50 | p99 |
|---|---|---|
| → first model request arrives | **${fmt(e2e.firstModelRequest.p50, 1)} ms** | ${fmt(e2e.firstModelRequest.p99, 1)} ms |
| → two-turn run finished | **${fmt(e2e.completion.p50, 1)} ms** | ${fmt(e2e.completion.p99, 1)} ms |
| → 202 received (overlaps the phases below) | ${fmt(e2e.phases.accepted.p50, 1)} ms | ${fmt(e2e.phases.accepted.p99, 1)} ms |

Where the time goes, one phase after another:

| phase | what happens | p50 | p99 |
|---|---|---|---|
| sent → run stored | route: token check, body hash, delivery ledger (a Durable Object: RPC + SQLite), RPC to the run's new object, its schema, its row and \`setAlarm\` | ${fmt(e2e.phases.toStored.p50, 1)} ms | ${fmt(e2e.phases.toStored.p99, 1)} ms |
| stored → alarm running | alarm scheduling, then the run-index flush (RPC) and the status write | ${fmt(e2e.phases.alarm.p50, 1)} ms | ${fmt(e2e.phases.alarm.p99, 1)} ms |
| alarm → first model request | engine start: journal load, catalog, toolsets, the \`openai\` client's request over loopback | ${fmt(e2e.phases.toFirstRequest.p50, 1)} ms | ${fmt(e2e.phases.toFirstRequest.p99, 1)} ms |
| first answer → second request | journal write (SQLite), the tool (a state write), journal write, second request | ${fmt(e2e.phases.toolTurn.p50, 1)} ms | ${fmt(e2e.phases.toolTurn.p99, 1)} ms |
| second answer → finished | journal write, outcome recorded, retention alarm set | ${fmt(e2e.phases.finish.p50, 1)} ms | ${fmt(e2e.phases.finish.p99, 1)} ms |

Started through \`POST /runs\` (no delivery ledger) the run is stored after ${fmt(e2e.api.toStored.p50, 1)} ms p50 (${fmt(e2e.api.toStored.p99, 1)} ms p99);
first model request ${fmt(e2e.api.firstModelRequest.p50, 1)} ms, finished ${fmt(e2e.api.completion.p50, 1)} ms (p50). For scale, the engine's own cost
per turn in process is ${fmt(perTurn(EDGEWORK, SHORT) * 1000, 1)} µs (section 1).
One local workerd on a shared machine: Cloudflare's scheduler, network and storage differ.

## 6. Load

\`wrangler dev\` (local workerd) on 127.0.0.1, the shipped settings (MODEL_DISPATCH=queue: every model request goes through the local queue
and its consumer), with an OpenAI-compatible fake model: ${load.runs} runs started through
\`POST /hooks/load-hook\` (token-verified), ${load.concurrency} at a time, each followed to its end (bench/load.mjs). Each run: one
model request that calls the \`counter\` tool, the tool, a second model request that answers.

completed ${load.completed}, failed ${load.failed}, lost ${load.lost}, duplicated ${load.duplicated} (a run whose model was asked more
than twice), ${load.distinctRunIds} distinct run ids; time to completion (webhook answer + the run's own clock from stored to
finished) p50 **${load.p50Ms} ms**, p99 **${load.p99Ms} ms**; ${fmt(load.wallSeconds, 1)} s for all. One local workerd process on this
machine: throughput here is the dev server's, not Cloudflare's.

## 7. Faults

${results.faults.runs} runs of a nested run (a worker calling a worker, 7 tool calls, one approval), each with one fault at a random
step (seed ${results.faults.seed}): ${results.faults.byMode.throw} by throwing mid-activation, ${results.faults.byMode.abort} by aborting the object; resumed by the
alarm. Completed: **${results.faults.completed}**; every tool side effect (counted outside the run) exactly once: **${results.faults.effectsExactlyOnce}**;
every model request exactly once: **${results.faults.modelRequestsExactlyOnce}** (bench/do/faults.bench.test.ts).
The same ${results.faultsQueue?.runs ?? 0} runs with MODEL_DISPATCH=queue (each activation's hand-offs delivered through the queue consumer): ${faultsQueueText()}.${
  faultMisses.length
    ? `\n\nNot exactly once: ${missText}. The fault is injected before a step starts; an effect of a *parallel* tool call that is
still in flight when the object is aborted has happened but is not recorded, so replay repeats it (a receiver that honours
the call's \`Idempotency-Key\` drops the repeat; the bench's effect counter does not). Which runs land in that window depends
on timing, so it moves when the engine gets faster or slower.`
    : ""
}

## 8. While the model thinks: MODEL_DISPATCH=direct and queue

A run of ${results.dispatch_direct.modelRequests} model requests (${results.dispatch_direct.modelRequests - 1} that call a tool, then the answer), driven in the Workers pool in each mode with a
zero-latency model (bench/do/dispatch.bench.test.ts). Requests to the run's object: start, alarms and, in queue mode, each
hand-off's claim and delivery. Rows from the object's SQL counters since it was created (its schema included). Active time:
the wall time of each call into the object (in queue mode the consumer's whole time is counted as the object's too, an upper bound:
its claim and delivery are inside it).

| measured (zero-latency model) | direct | queue |
|---|---|---|
| requests to the object | ${results.dispatch_direct.requests} | ${results.dispatch_queue.requests} |
| activations (alarms) / alarms set | ${results.dispatch_direct.alarms} / ${results.dispatch_direct.alarmsSet} | ${results.dispatch_queue.alarms} / ${results.dispatch_queue.alarmsSet} |
| rows written / read | ${results.dispatch_direct.rowsWritten} / ${results.dispatch_direct.rowsRead} | ${results.dispatch_queue.rowsWritten} / ${results.dispatch_queue.rowsRead} |
| object active, ms | ${fmt(results.dispatch_direct.activeMs, 0)} | ${fmt(results.dispatch_queue.activeMs, 0)} |
| queue messages / consumer invocations / consumer ms | — | ${results.dispatch_queue.messages} / ${results.dispatch_queue.consumerInvocations} / ${fmt(results.dispatch_queue.consumerMs, 0)} |

In direct mode the object is active for the whole model latency on top of that; in queue mode it is idle (and not billed:
an idle object that can hibernate is not charged duration) while the consumer waits. Priced with the published unit prices
(bench/pricing.mjs: Durable Objects requests $${UNIT_PRICES.doRequestPerM}/M, duration $${UNIT_PRICES.gbSecondPerM}/M GB-s at 128 MB, rows written $${UNIT_PRICES.rowWrittenPerM}/M,
rows read $${UNIT_PRICES.rowReadPerM}/M; Queues $${UNIT_PRICES.queueOperationPerM}/M operations, ${UNIT_PRICES.operationsPerMessage} per message; Workers $${UNIT_PRICES.workerRequestPerM}/M requests, $${UNIT_PRICES.workerCpuMsPerM}/M CPU ms; read 2026-11-22),
before included amounts. Model tokens are the provider's bill, the same in both modes.

| model latency | direct: object active | direct USD per run | queue: object active | queue USD per run | queue ÷ direct |
|---|---|---|---|---|---|
${dispatchPrices
  .map(
    (p) =>
      `| ${p.seconds} s | ${fmt(p.direct.activeSeconds, 1)} s | ${fmt(p.direct.usd, 8)} | ${fmt(p.queue.activeSeconds, 2)} s | ${fmt(p.queue.usd, 8)} | ${fmt(p.queue.usd / p.direct.usd, 2)} |`,
  )
  .join("\n")}

Line by line at ${dispatchPrices[1].seconds} s (USD): ${["direct", "queue"].map((m) => `${m}: ${dispatchPrices[1][m].lines.map((l) => `${l.unit} ${fmt(l.count, l.count % 1 ? 2 : 0)} → ${fmt(l.usd, 8)}`).join("; ")}`).join(". ")}.
Queue mode's prices include what a slow model adds (bench/pricing.mjs): the consumer renews its claim every ${RENEW_EVERY_SECONDS} s while the model thinks
(one request and one row each; ${dispatchPrices.map((p) => `${p.queue.renewals} per run at ${p.seconds} s`).join(", ")}) and the lapse alarm fires each minute
to find it renewed (one request and one activation; ${dispatchPrices.map((p) => `${p.queue.lapseChecks} at ${p.seconds} s`).join(", ")}).

${waitsText()}

Latency, \`wrangler dev\` (local workerd and its local queue), the section 5 workload run again with MODEL_DISPATCH=queue
(${e2eQueue.runs} runs through the webhook, one at a time):

| phase | direct p50 / p99 | queue p50 / p99 | added p50 |
|---|---|---|---|
${[
  ["alarm → first model request (hand-off, queue, claim)", "toFirstRequest"],
  ["first answer → second request (delivery, wake-up, replay, tool, hand-off, queue, claim)", "toolTurn"],
  ["second answer → finished (delivery, wake-up, replay, outcome)", "finish"],
]
  .map(
    ([label, k]) =>
      `| ${label} | ${fmt(e2e.phases[k].p50, 1)} / ${fmt(e2e.phases[k].p99, 1)} ms | ${fmt(e2eQueue.phases[k].p50, 1)} / ${fmt(e2eQueue.phases[k].p99, 1)} ms | ${fmt(addedP50(k), 1)} ms |`,
  )
  .join("\n")}
| webhook → two-turn run finished | ${fmt(e2e.completion.p50, 1)} / ${fmt(e2e.completion.p99, 1)} ms | ${fmt(e2eQueue.completion.p50, 1)} / ${fmt(e2eQueue.completion.p99, 1)} ms | ${fmt(e2eQueue.completion.p50 - e2e.completion.p50, 1)} ms |

Queue mode is the default (\`MODEL_DISPATCH\` unset means queue, durable-objects/engine-config.ts): its fault benchmark is green (section 7), it adds
${fmt(addedP50("toolTurn"), 1)} ms p50 per model request here (goal ≤ 100 ms), and it is the cheaper mode once models take seconds. With models that
answer in about a second, \`direct\` costs less (the table's first row): set it for those. Both modes stream the model's text to an open run page (below).

${liveTextSection(results.live_text)}

## 9. Durable waits and tracing

Waits (bench/do/waits.bench.test.ts, the Workers pool; by difference between runs of one and three waits, each woken by the
test clock or by an event): **${results.waits.perSleep} rows written per sleep** (its waits row, the \`run_waiting\` event, its end as a
journal step), **${results.waits.perEvent} per event wait** woken by an event (the event's inbox row too); a run's first wait adds its
tables (${results.waits.firstSleep} rows with a sleep, ${results.waits.firstEvent} with an event wait); alarms set: ${results.waits.alarmsPerSleep} per sleep, ${results.waits.alarmsPerEvent} per event wait.
A waiting run holds one alarm (its earliest deadline) and costs nothing else while it waits.

Tracing (bench/trace-cost.ts, in Node: a ${trace.turns}-turn run with tool calls, ${trace.spans} spans; CPU ms per run, median of 400, interleaved):
off ${fmt(trace.cpuMsPerRun.off, 2)} ms, on ${fmt(trace.cpuMsPerRun.on, 2)} ms (+${fmt(trace.addedCpuMs.on, 2)}), on with content ${fmt(trace.cpuMsPerRun.content, 2)} ms (+${fmt(trace.addedCpuMs.content, 2)});
bytes exported per run ${trace.exportBytes.on} (with content ${trace.exportBytes.content}). Tracing writes no rows; the export is one
request per activation, sent after it.

## 10. Webhooks per key, completion webhooks and bulk operations

Flow control (bench/do/flow.bench.test.ts, the Workers pool): what one delivery costs the key's object (SQL rows; ${results.flow.note}).

| delivery | rows written | rows read | alarms set |
|---|---|---|---|
${flowRows(results.flow)}

A follow-up into the running run (\`on_busy: message\`) costs the run's object ${results.flow.messageWhileBusyRunObject.rowsWritten} rows written, ${results.flow.messageWhileBusyRunObject.rowsRead} read.
Each key is its own object (named by the hash of trigger and key): no object sees every delivery (tests/flow/sharding.test.ts, 500 keys).

Completion webhooks (bench/do/flow.bench.test.ts): one notification of a run's end costs the run's object **${results.notify.rowsWrittenPerNotification} rows written**,
${results.notify.rowsReadPerNotification} read, ${results.notify.alarmsSet} alarm set (${results.notify.note}).

Bulk cancel (bench/bulk-cancel.mjs, wrangler dev): **${bulk.runs} matching runs cancelled in ${fmt(bulk.ms / 1000, 1)} s** (${fmt(bulk.runs / (bulk.ms / 1000), 0)} runs/s; the operation's rate is 25 a second per batch),
the app stopped and started again at ${bulk.restarted ? bulk.restarted.at_done : "—"} done; operation ${bulk.operation.status}, counts ${JSON.stringify(bulk.operation.counts)};
the runs' own word: matching ${JSON.stringify(bulk.matching)}, outside the filter ${JSON.stringify(bulk.outside)}.

## 11. Scale: the first object to saturate

${scaleSection(results.scale, fmt)}

${childRunsText(results.children_fan_out, results.children_rows)}

## Commands

\`\`\`sh
npm run bench                                        # all of the above, this file
node_modules/.bin/vitest run --config vitest.bench.config.ts   # only the Durable Object measurements
node bench/scale.mjs                                 # only section 11 (runs bench/do/scale.bench.test.ts, prints the table)
node bench/e2e.mjs 200                               # only the end-to-end timings (wrangler dev)
node bench/e2e.mjs 200 compare                       # the same, MODEL_DISPATCH=direct against queue
node bench/live-text-cost.mjs                        # only live text in queue mode (section 8's table, printed)
node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-engine.mjs 10 5000 && node bench/profile-top.mjs /tmp/prof/*.cpuprofile
node bench/ratio-probe.mjs 10 8 400 /tmp/base              # edgework ÷ the bare loop alone; with an older checkout in /tmp/base, an A/B of a change
\`\`\`
`;
writeFileSync(join(root, "BENCHMARKS.md"), md);
log("wrote BENCHMARKS.md");

/**
 * Section 8's slow-model measurements (bench/do/dispatch-wait.bench.test.ts), reported
 * at full scale: every wait there is a timer or a model's answer scaled by the same factor.
 */
function waitsText() {
  const [d, q, r] = dispatchWaits.map((s) => results[s]);
  const full = (ms) => `${fmt(ms / d.scale / 1000, 1)} s`;
  const scaled = (ms) => `${fmt(ms / 1000, 2)} s`;
  return `Slow models, bench/do/dispatch-wait.bench.test.ts, time scaled by ${d.scale} (a ${full(d.slowMs)} model answers in ${scaled(d.slowMs)}, the lease and
the claim timeout shortened by the same factor, so every wait is the same fraction of the others; the fixed costs of RPCs and
replays, tens of ms, weigh ${fmt(1 / d.scale, 0)}× more than at full scale, so the full-scale figures below are upper bounds).
A ${full(d.quickMs)} request started while ${d.inFlight} requests of ${full(d.slowMs)} are in flight waits, besides its own ${full(d.quickMs)}:

| mode | added wait, scaled | at full scale |
|---|---|---|
| direct (each run's object asks its own model) | ${scaled(d.addedMs)} | ≤ ${full(d.addedMs)} |
| queue (a hand-off unclaimed for the claim timeout, ${full(q.claimTimeoutMs)}, is asked by the run's object) | ${scaled(q.addedMs)} | ≤ ${full(q.addedMs)} |

A consumer that dies holding a claim (no renewal, no answer): the request is sent again ${scaled(r.resentMs)} after its claim
(the lease, ${full(r.leaseMs)} at full scale: ≤ ${full(r.resentMs)}) and answered ${scaled(r.answeredMs)} after it (a ${full(r.quickMs)} model; ≤ ${full(r.answeredMs)} at full scale).`;
}

/** Section 10's table rows: the flow benchmark's measured deliveries, in the order a key meets them. */
function flowRows(f) {
  const rows = [
    ["a key's first delivery (makes its object's tables)", f.firstDeliveryOfAKey],
    ["a start on a free key", f.startOnAFreeKey],
    ["queued while the key is busy", f.queuedWhileBusy],
    ["the key's run ends: the next queued one starts", f.runEndedStartsTheNext],
    ["skipped while busy", f.skippedWhileBusy],
    ["replaces the running run", f.replaceWhileBusy],
    ["a message to the running run", f.messageWhileBusy],
    ["debounced (joins the batch)", f.debouncedDelivery],
    ["the batch starts its run (the key's alarm)", f.debounceFlushAndStart],
    ["a redelivery of an acted delivery", f.redeliveryOfAnActedDelivery],
    ["refused over the rate", f.refusedOverTheRate],
  ];
  return rows.map(([label, c]) => `| ${label} | ${c.rowsWritten} | ${c.rowsRead} | ${c.alarmsSet} |`).join("\n");
}

/** Section 11's child runs (bench/do/children.bench.test.ts): the 200-child fan-out and what each child costs either side. */
function childRunsText(fan, rows) {
  if (!fan || !rows) return "Child runs: not measured in this run (bench/do/children.bench.test.ts reported nothing).";
  return `Child runs (bench/do/children.bench.test.ts, the Workers pool): one parent maps a function over **${fan.children} children, ${fan.concurrency} at once**, through ${fan.kills} forced
evictions of the parent and of children: every child's effect and result once, done in ${fmt(fan.ms / 1000, 1)} s (${fan.rounds} rounds of the test's alarm driver, which runs
every object's alarm in turn; the platform runs them in parallel). Per child (${rows.children} children, 10 at once, no evictions): the parent writes
**${rows.parent_per_child.rowsWritten} rows** and reads ${rows.parent_per_child.rowsRead} (each wake replays its journal), ${rows.parent_per_child.alarmsSet} alarms; the child itself
writes ${rows.child_each.rowsWritten} rows and reads ${rows.child_each.rowsRead}, ${rows.child_each.alarmsSet} alarms (a run's own cost).`;
}
