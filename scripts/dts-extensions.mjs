// Gives the relative imports of the emitted .d.ts their file: tsc writes them as the
// source has them ("./client"), which a bundler resolves but Node's ESM resolution
// (a consumer's `moduleResolution: node16`/`nodenext`) refuses. Each becomes the .js
// file beside its .d.ts ("./client.js", or "./dir/index.js" for a folder).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** `from "./x"`, `import("./x")` and `import "./x"` with a relative specifier without an extension. */
const RELATIVE = /((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*)\2/g;

/** The specifier Node resolves for `spec` imported from `file`, or `spec` unchanged if it names no emitted .d.ts. */
function withFile(file, spec) {
  if (/\.[cm]?js$/.test(spec)) return spec;
  const base = join(dirname(file), spec);
  if (existsSync(`${base}.d.ts`)) return `${spec}.js`;
  if (existsSync(join(base, "index.d.ts"))) return `${spec}/index.js`;
  throw new Error(`${file}: imports "${spec}", which is no .d.ts the build emitted`);
}

/** Rewrites every .d.ts under `dir` in place. */
export function addDtsExtensions(dir) {
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!name.endsWith(".d.ts")) continue;
    const file = join(dir, name);
    const text = readFileSync(file, "utf8");
    const next = text.replace(RELATIVE, (_m, head, quote, spec) => `${head}${quote}${withFile(file, spec)}${quote}`);
    if (next !== text) writeFileSync(file, next);
  }
}
