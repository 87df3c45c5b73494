// Scale from measured request counts (BENCHMARKS.md, "Scale"): N run starts a second against each
// object kind a run's object talks to, with bench/do/scale.bench.test.ts's counts per run and an
// assumed capacity per object. Which object saturates first, and at what N, before and after the run
// index was sharded. A model, not a load test: the platform's limit is per object, so the first
// object to reach its capacity caps the deployment however many run objects there are.

// Cloudflare: "An individual Object has a soft limit of 1,000 requests per second"
// (developers.cloudflare.com/durable-objects/reference/faq/, "How much work can a single Durable
// Object do?", read 2026-11-28). Simple requests; a heavier one lowers it.
export const OBJECT_CAPACITY = 1000;

/**
 * For each object kind (binding): the load on its busiest instance per run start a second, and the N
 * at which that instance reaches `capacity`. An instance every run reaches (a singleton) takes all
 * of a run's requests; a kind spread by a hash takes `share` of them on its busiest instance (the
 * measured share of the busiest shard); a kind whose instances are the run's own (no run shares them)
 * never saturates from more runs.
 */
export function saturation(kinds, { share = 1, capacity = OBJECT_CAPACITY } = {}) {
  return Object.entries(kinds).map(([kind, k]) => {
    const perInstance = k.shared > 0 ? k.shared : k.perRun * share;
    const spread = k.shared > 0 ? "one object every run reaches" : share < 1 ? `hash-spread, busiest ${(share * 100).toFixed(1)}%` : "per run";
    return { kind, perRun: k.perRun, perInstance, spread, saturatesAt: perInstance > 0 ? capacity / perInstance : Infinity };
  });
}

/** The first kind to saturate (lowest N), or null when none does. */
export const firstToSaturate = (rows) => rows.filter((r) => Number.isFinite(r.saturatesAt)).sort((a, b) => a.saturatesAt - b.saturatesAt)[0] ?? null;

/** Section text for BENCHMARKS.md from the `scale` result of the Workers pool. */
export function scaleSection(s, fmt) {
  const before = saturation(s.before);
  const after = saturation(s.after, { share: s.shardMaxShare });
  const global = saturation(s.global, { share: s.shardMaxShare });
  const row = (label, r) =>
    `| ${label} | ${r.kind} | ${fmt(r.perRun, 1)} | ${r.spread} | ${fmt(r.perInstance, 2)} | ${Number.isFinite(r.saturatesAt) ? `**${fmt(r.saturatesAt, 0)}**` : "never"} |`;
  const first = (rows) => {
    const f = firstToSaturate(rows);
    return f ? `${f.kind} at ${fmt(f.saturatesAt, 0)} run starts/s` : "none";
  };
  return `Measured (bench/do/scale.bench.test.ts, the Workers pool): the requests a run's object sends to other objects over the hot
path — started, paused for one approval, approved, finished — counted per object in ${s.runs} real runs (TestRunDO's env counts
every call through a stub). The API request that starts a run reaches only that run's own object. Modelled (bench/scale.mjs): N run
starts a second put N × (requests per run on the busiest instance) on each kind; an object serves about ${OBJECT_CAPACITY} simple requests
a second (Cloudflare's documented soft limit), so a kind saturates at ${OBJECT_CAPACITY} ÷ that. The run index has ${s.shards} shards; over
100,000 random ids the busiest holds ${fmt(s.shardMaxShare * 100, 2)}% (even: ${fmt(100 / s.shards, 2)}%).

| layout | object kind | requests per run | spread | on the busiest instance per run start | saturates at N run starts/s |
|---|---|---|---|---|---|
${before.map((r) => row("before: one index", r)).join("\n")}
${after.map((r) => row("after: sharded index", r)).join("\n")}
${global.map((r) => row("after, each run calling a `scope: global` tool twice", r)).join("\n")}

First to saturate — before: **${first(before)}**; after: **${first(after)}**; with two global tool calls a run: **${first(global)}**.
Global toolsets: the one GlobalToolsetsDO served **${fmt(s.globalCallsPerSecond, 0)} counter calls a second** here (${s.globalConcurrency} callers at once,
the local workerd of this machine; a call whose tool fetches upstream holds one of its six connections and serves far fewer;
docs/operate.md, "Global toolsets").`;
}

// `node bench/scale.mjs`: only this measurement (the Workers pool) and its table, printed.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { spawnSync } = await import("node:child_process");
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
  const args = ["run", "--config", "vitest.bench.config.ts", "--project", "bench", "bench/do/scale.bench.test.ts"];
  const pool = spawnSync("node_modules/.bin/vitest", args, { env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  const found = (pool.stdout + pool.stderr).match(/BENCH_RESULT (\{"section":"scale".*\})/);
  if (!found) {
    console.error(pool.stdout.slice(-4000), pool.stderr.slice(-4000));
    throw new Error("bench/do/scale.bench.test.ts reported nothing");
  }
  const fmt = (n, d = 3) => (n === null || n === undefined ? "—" : Number(n).toFixed(d));
  console.log(scaleSection(JSON.parse(found[1]).data, fmt));
}
