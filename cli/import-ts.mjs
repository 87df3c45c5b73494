// Imports edgework's own TypeScript from a Node script: esbuild bundles an entry
// (packages stay external, Node loads them) to node_modules/.cache and imports it.
// `root` is edgework's folder (this repository, or node_modules/edgework in a
// user's project), not the working directory: the cache sits where Node finds
// edgework's dependencies.
import { build } from "esbuild";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const root = new URL("..", import.meta.url).pathname;

// A project's kinds and functions import "edgework" (its entry re-exports the Durable Object
// classes): here it is this copy's source, and the Workers runtime's modules, which Node
// has not, are stand-ins nothing at build time calls.
const WORKERS_RUNTIME = {
  "cloudflare:workers": "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } } export class RpcTarget {}",
  "cloudflare:email": "export class EmailMessage {}",
};

const buildTimeResolution = {
  name: "edgework-at-build-time",
  setup(b) {
    b.onResolve({ filter: /^edgework$/ }, () => ({ path: join(root, "src/edgework.ts") }));
    b.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "workers-runtime" }));
    b.onLoad({ filter: /.*/, namespace: "workers-runtime" }, (args) => {
      const contents = WORKERS_RUNTIME[args.path];
      if (contents === undefined) throw new Error(`${args.path}: no build-time stand-in (cli/import-ts.mjs)`);
      return { contents, loader: "js" };
    });
  },
};

/**
 * @param {string} name cache file name @param {string} contents an ES module re-exporting what you need
 * @param {string} [resolveDir] where its relative imports start (default this checkout; packages still come from here)
 */
export async function importTs(name, contents, resolveDir = root) {
  const outfile = join(root, "node_modules/.cache", `${name}.mjs`);
  await build({
    stdin: { contents, resolveDir, loader: "ts" },
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    outfile,
    logLevel: "error",
    plugins: [buildTimeResolution],
  });
  return import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);
}

/** `export { name } from <module>` when the project has the module (relative to it), else `export const name = fallback`. */
export function projectExport(project, module, name, fallback) {
  const path = resolve(project, module);
  return existsSync(path) ? `export { ${name} } from ${JSON.stringify(path)};` : `export const ${name} = ${fallback};`;
}
