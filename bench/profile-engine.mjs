// Profiles edgework's engine on the engine-overhead workload:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-engine.mjs [turns] [runs]
// then read the top self-time frames with `node bench/profile-top.mjs /tmp/prof/*.cpuprofile`.
import { importTs } from "../cli/import-ts.mjs";

const turns = Number(process.argv[2] ?? 10);
const runs = Number(process.argv[3] ?? 3000);
const { edgework } = await importTs("bench-profile", `export { edgework } from "./bench/engine-overhead";`);
const run = edgework(turns);
const t0 = performance.now();
for (let i = 0; i < runs; i++) await run();
console.log(`${runs} runs of ${turns} turns: ${(((performance.now() - t0) / runs / turns) * 1000).toFixed(1)} µs per turn`);
