// The top self-time frames of a V8 .cpuprofile (from `node --cpu-prof`), each named
// by function and source file (for esbuild bundles, the `// src/…` comment above it).
//   node bench/profile-top.mjs <file.cpuprofile> [count]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Module start lines of an esbuild bundle: [[line, "src/engine/run/loop.ts"], …]. */
function moduleLines(bundleUrl) {
  const lines = readFileSync(fileURLToPath(bundleUrl.split("?")[0]), "utf8").split("\n");
  return lines.flatMap((l, i) => (/^\/\/ (src|bench|node_modules)\/\S+$/.test(l) ? [[i + 1, l.slice(3)]] : []));
}

/** @returns {Array<{ frame: string, percent: number }>} start-up (module loading, compiling) left out */
export function topFrames(profilePath, count = 25) {
  const profile = JSON.parse(readFileSync(profilePath, "utf8"));
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const modules = new Map();
  const self = new Map();
  let total = 0;
  for (const node of profile.nodes) {
    const t = dt.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || /node:internal\/(modules|bootstrap)|cjs-module-lexer/.test(url)) continue;
    total += t;
    let file = url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*\/(bench|scripts)\//, "$1/");
    if (url.includes("/.cache/")) {
      if (!modules.has(url)) modules.set(url, moduleLines(url));
      file = modules.get(url).findLast(([start]) => start <= lineNumber + 1)?.[1] ?? file;
    }
    const frame = `${functionName || "(anonymous)"} ${file}`.trim();
    self.set(frame, (self.get(frame) ?? 0) + t);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, t]) => ({ frame, percent: (100 * t) / total }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const { frame, percent } of topFrames(process.argv[2], Number(process.argv[3] ?? 25))) console.log(`${percent.toFixed(1).padStart(5)}%  ${frame}`);
}
