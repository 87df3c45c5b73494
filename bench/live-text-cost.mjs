// Live text in queue mode, priced: bench/do/live-text.bench.test.ts measures (section `live_text`),
// this turns it into BENCHMARKS.md's table (scripts/bench.mjs calls `liveTextSection`).
// `node bench/live-text-cost.mjs` runs only that measure, offline, and prints the section.
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PRICES, priceRun } from "./pricing.mjs";

const WATCHERS = [
  ["off", "off (MODEL_DELTA_INTERVAL_MS=0: not streamed)"],
  ["unwatched", "on, no page open"],
  ["watched", "on, a page open"],
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d) => Number(n).toFixed(d);
const FIELDS = ["forwards", "requests", "activeMs", "forwardMs", "alarms", "rowsWritten", "rowsRead", "wallMs", "pageRequests", "pageMs"];

/** Each case's median over its repeats, priced as section 8 prices a queue-mode run. */
export function liveTextCases(data) {
  const cases = [];
  for (const seconds of [...new Set(data.runs.map((r) => r.seconds))]) {
    for (const [watcher, label] of WATCHERS) {
      const runs = data.runs.filter((r) => r.seconds === seconds && r.watcher === watcher);
      const m = Object.fromEntries(FIELDS.map((f) => [f, median(runs.map((r) => r[f]))]));
      // The consumer's CPU is left out: its wall time here is the model's, and section 8 measures it at zero latency.
      const price = priceRun({
        mode: "queue",
        modelRequests: 1,
        modelSeconds: seconds,
        measured: { ...m, messages: 1, consumerInvocations: 1, consumerMs: 0 },
      });
      cases.push({ seconds, watcher, label, repeats: runs.length, ...m, usd: price.usd });
    }
  }
  // What live text adds: its forwards' requests and active time (the rest of the run is the same with it off, up to noise).
  for (const c of cases) c.addedUsd = (c.forwards * PRICES.doRequestPerM + (c.forwardMs / 1000) * PRICES.objectGb * PRICES.gbSecondPerM) / 1e6;
  return cases;
}

/** BENCHMARKS.md's live-text table and its text (a subsection of section 8). */
export function liveTextSection(data) {
  const cases = liveTextCases(data);
  const watched = cases.filter((c) => c.watcher === "watched");
  return `### Live text in queue mode

A run of one model request whose answer streams for ${[...new Set(cases.map((c) => c.seconds))].join(" or ")} s (a piece every ${data.pieceMs} ms), MODEL_DISPATCH=queue, driven in the
Workers pool through the app's consumer (bench/do/live-text.bench.test.ts, median of ${cases[0].repeats}): live text off (the non-streaming figure above, for
one request), on with nobody watching, and on while a run page reads the object every ${data.pagePollMs} ms. Requests: every call into the run's object by
the run and the consumer (start, alarms, claim, forwards, delivery); active: their wall time (an upper bound: a forward only appends to memory).
Priced as above (bench/pricing.mjs), the consumer's CPU left out (its wall time here is the model's); added: the forwards' requests and active time.

| answer | live text | forwards | requests to the object | object active, ms (of it forwards) | rows written | USD per run | added per million runs |
|---|---|---|---|---|---|---|---|
${cases
  .map(
    (c) =>
      `| ${c.seconds} s | ${c.label} | ${c.forwards} | ${c.requests} | ${fmt(c.activeMs, 0)} (${fmt(c.forwardMs, 0)}) | ${c.rowsWritten} | ${fmt(c.usd, 8)} | ${c.watcher === "off" ? "—" : `+$${fmt(c.addedUsd * 1e6, 2)}`} |`,
  )
  .join("\n")}

Forwards write no row and are throttled (one per ${data.intervalMs} ms while a page reads, one per ${data.unwatchedIntervalMs / 1000} s otherwise), so the object stays idle
while the model writes. The page's own reads are its cost whatever it shows, and larger: ${watched
    .map((c) => `${c.pageRequests} requests (${fmt(c.pageMs, 0)} ms) over the ${c.seconds} s answer`)
    .join(", ")}.`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
  execFileSync("node", ["scripts/bundle-workers.mjs"], { env, stdio: "inherit" });
  const run = spawnSync(
    "node_modules/.bin/vitest",
    ["run", "--config", "vitest.bench.config.ts", "--project", "bench-queue", "bench/do/live-text.bench.test.ts"],
    { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const line = (run.stdout + run.stderr).match(/BENCH_RESULT (\{"section":"live_text".*\})/);
  if (!line) {
    console.error((run.stdout + run.stderr).slice(-4000));
    throw new Error("the live-text benchmark failed");
  }
  console.log(liveTextSection(JSON.parse(line[1]).data));
}
