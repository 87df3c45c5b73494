// Fails when a file under src/ imports from durable-objects/ (run by `npm run typecheck`).
// The dependency points one way: the Durable Objects (and createApp,
// durable-objects/create-app.ts) use the app; the app reaches them only through the RPC
// interfaces it declares (src/runs/rpc.ts). Type imports count too. One exception:
// src/edgework.ts, the package's entry, is the composition root that hands a user's
// Worker createApp and the Durable Object classes (it only re-exports).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "src");
const objects = join(root, "durable-objects");
const packageEntry = join(src, "edgework.ts");

const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : /\.(ts|tsx|mts)$/.test(n) ? [join(d, n)] : []));

// Every module specifier: `from "…"`, `import "…"`, `import("…")` (dynamic or in a type).
const SPECIFIER = /\bfrom\s*["']([^"']+)["']|\bimport\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** `file:line → specifier` for each import of a file under src/ that lands in durable-objects/. */
export function wrongWayImports() {
  const found = [];
  for (const file of walk(src).filter((f) => f !== packageEntry)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (target !== objects && !target.startsWith(`${objects}/`)) continue;
      const line = text.slice(0, m.index).split("\n").length;
      found.push(`${relative(root, file)}:${line} → ${spec}`);
    }
  }
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = wrongWayImports();
  if (found.length) {
    console.error(
      `src/ must not import durable-objects/ (declare what src needs in src/, e.g. an RPC interface in src/runs/rpc.ts, and let the object implement it):\n${found.map((f) => `  ${f}`).join("\n")}`,
    );
    process.exit(1);
  }
}
