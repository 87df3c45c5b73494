// Fails when the engine's modules import each other in a circle (run by `npm run
// typecheck`, so CI runs it). Only imports that exist at run time count: `import type`
// and `export type` are erased by the compiler and cannot make a module see another
// half-initialised. Names the cycle, e.g. "loop.ts → context.ts → loop.ts".
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const engine = join(root, "src/engine");

const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".ts") ? [join(d, n)] : []));

// `import … from "./x"` / `export … from "./x"` / `import "./x"`, one statement at a time.
const STATEMENT = /^\s*(import|export)\s+([^;]*?)\s*from\s*["'](\.[^"']*)["']|^\s*import\s*["'](\.[^"']*)["']/gm;

/** Relative imports of one file that survive compilation, as absolute paths. */
function runtimeImports(file) {
  const text = readFileSync(file, "utf8");
  const out = [];
  for (const m of text.matchAll(STATEMENT)) {
    const clause = m[2] ?? "";
    const spec = m[3] ?? m[4];
    if (/^type\s/.test(clause)) continue;
    // `import { type A, type B } from` is erased too; `import { type A, b }` is not.
    const braces = /^\{([^}]*)\}$/.exec(clause.trim());
    if (braces && braces[1].split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "))) continue;
    const base = resolve(dirname(file), spec);
    const target = [`${base}.ts`, join(base, "index.ts"), base].find((p) => existsSync(p) && statSync(p).isFile());
    if (target?.startsWith(engine)) out.push(target);
  }
  return out;
}

/** Every cycle's path, found by depth-first search (each reported once, from its first module). */
export function engineImportCycles() {
  const files = walk(engine);
  const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
  const state = new Map(); // file → "open" | "done"
  const stack = [];
  const cycles = [];
  const visit = (f) => {
    state.set(f, "open");
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === "open") cycles.push([...stack.slice(stack.indexOf(g)), g].map((p) => relative(engine, p)).join(" → "));
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = engineImportCycles();
  if (cycles.length) {
    console.error(`src/engine has import cycles (a module must not import, even through others, a module that imports it):\n${cycles.map((c) => `  ${c}`).join("\n")}`);
    process.exit(1);
  }
  console.log("src/engine: no import cycles");
}
