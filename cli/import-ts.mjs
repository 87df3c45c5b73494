// Imports edgework's own TypeScript from a Node script: esbuild bundles an entry
// (packages stay external, Node loads them) to node_modules/.cache and imports it.
// `root` is edgework's folder (this repository, or node_modules/edgework in a
// user's project), not the working directory: the cache sits where Node finds
// edgework's dependencies.
import { build } from "esbuild";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const root = new URL("..", import.meta.url).pathname;

/**
 * @param {string} name cache file name @param {string} contents an ES module re-exporting what you need
 * @param {Record<string, string>} [stubs] module path suffix → the source to use instead (a file that may not exist yet)
 */
export async function importTs(name, contents, stubs = {}) {
  const outfile = join(root, "node_modules/.cache", `${name}.mjs`);
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const stubbing = {
    name: "stubs",
    setup(b) {
      for (const suffix of Object.keys(stubs)) b.onResolve({ filter: new RegExp(`/${escapeRegExp(suffix)}$`) }, () => ({ path: suffix, namespace: "stub" }));
      b.onLoad({ filter: /.*/, namespace: "stub" }, (args) => ({ contents: stubs[args.path], loader: "ts" }));
    },
  };
  await build({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    outfile,
    logLevel: "error",
    plugins: [stubbing],
  });
  return import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);
}
