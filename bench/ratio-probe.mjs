// edgework ÷ the bare loop at N turns, interleaved, without the other frameworks (a
// quick probe for engine changes; BENCHMARKS.md section 1 is the published figure):
//   node bench/ratio-probe.mjs [turns=10] [rounds=7] [runs=400] [baseDir]
// (`runs`: runs of each implementation per round). With `baseDir` (an older checkout:
// `git archive <rev> src bench | tar -x -C /tmp/base`) its edgework runs interleaved too,
// so a change is measured against its parent under the same load; the last line's
// `edgework ÷ base` is the change's effect.
import { importTs, root } from "../cli/import-ts.mjs";

const [turns = 10, rounds = 7, runs = 400] = process.argv.slice(2, 5).map(Number);
const baseDir = process.argv[5];

/** bench/engine-overhead.ts of `dir` (packages resolved from this checkout), imported. */
const load = (name, dir, exports) => importTs(name, `export { ${exports} } from "./bench/engine-overhead";`, dir);

const head = await load("ratio-probe-head", root, "edgework, bare");
const impls = [
  ["bare", head.bare(turns)],
  ["edgework", head.edgework(turns)],
];
if (baseDir) impls.push(["base", (await load("ratio-probe-base", baseDir, "edgework")).edgework(turns)]);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** µs per turn of one run. */
async function timed(run) {
  const t0 = performance.now();
  await run();
  return ((performance.now() - t0) / turns) * 1000;
}

for (const [, run] of impls) for (let i = 0; i < 200; i++) await run(); // warm-up
// Each round: `runs` runs of every implementation, one of each in turn (the order rotating), so
// load that comes and goes on a shared machine falls on all of them alike; a round's figure is its median.
const perRound = new Map(impls.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  const xs = new Map(impls.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < impls.length; k++) {
      const [name, run] = impls[(i + k) % impls.length];
      xs.get(name).push(await timed(run));
    }
  }
  for (const [name] of impls) perRound.get(name).push(median(xs.get(name)));
  const ratio = (name) => (perRound.get(name)[r] / perRound.get("bare")[r]).toFixed(2);
  console.log(
    `round ${r + 1}: ${impls.map(([n]) => `${n} ${perRound.get(n)[r].toFixed(1)} µs`).join(" · ")} · edgework ${ratio("edgework")}×${baseDir ? ` · base ${ratio("base")}×` : ""}`,
  );
}
const med = (name) => median(perRound.get(name));
console.log(
  `median of rounds: ${impls.map(([n]) => `${n} ${med(n).toFixed(1)} µs`).join(" · ")} · edgework ÷ bare ${(med("edgework") / med("bare")).toFixed(2)}×` +
    (baseDir ? ` · base ÷ bare ${(med("base") / med("bare")).toFixed(2)}× · edgework ÷ base ${(med("edgework") / med("base")).toFixed(3)}` : ""),
);
