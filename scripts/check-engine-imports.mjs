// Fails when the engine's modules import each other in a circle (run by `npm run
// typecheck`, so CI runs it). Type imports count too: `import type` is erased at run
// time, but a circle of types is still a circle a reader has to walk. Shared interfaces
// live in src/engine/types/, which imports nothing else of the engine. Names the cycle,
// e.g. "loop.ts → context.ts → loop.ts".
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const ENGINE = join(root, "src/engine");

const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".ts") ? [join(d, n)] : []));

// `import … from "./x"` / `export … from "./x"` / `import "./x"`, one statement at a time.
const STATEMENT = /^\s*(import|export)\s+([^;]*?)\s*from\s*["'](\.[^"']*)["']|^\s*import\s*["'](\.[^"']*)["']/gm;

/** Relative imports of one file into `engine`, type-only ones included, as absolute paths. */
function engineImports(engine, file) {
  const text = readFileSync(file, "utf8");
  const out = [];
  for (const m of text.matchAll(STATEMENT)) {
    const spec = m[3] ?? m[4];
    const base = resolve(dirname(file), spec);
    const target = [`${base}.ts`, join(base, "index.ts"), base].find((p) => existsSync(p) && statSync(p).isFile());
    if (target?.startsWith(engine)) out.push(target);
  }
  return out;
}

/** Every cycle's path, found by depth-first search (each reported once, from its first module). */
export function engineImportCycles(engine = ENGINE) {
  const files = walk(engine);
  const graph = new Map(files.map((f) => [f, engineImports(engine, f)]));
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

/** Imports from `types/` of anything outside it, as "types/x.ts → y.ts": the types layer sits below every module. */
export function typesLayerLeaks(engine = ENGINE) {
  const types = join(engine, "types");
  if (!existsSync(types)) return [];
  return walk(types).flatMap((f) =>
    engineImports(engine, f)
      .filter((g) => !g.startsWith(`${types}/`))
      .map((g) => `${relative(engine, f)} → ${relative(engine, g)}`),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = engineImportCycles();
  const leaks = typesLayerLeaks();
  if (cycles.length)
    console.error(
      `src/engine has import cycles, type imports included (a module must not import, even through others, a module that imports it):\n${cycles.map((c) => `  ${c}`).join("\n")}`,
    );
  if (leaks.length) console.error(`src/engine/types must import only from types/:\n${leaks.map((c) => `  ${c}`).join("\n")}`);
  if (cycles.length || leaks.length) process.exit(1);
  console.log("src/engine: no import cycles; types/ imports only types/");
}
