// Imports the project's TypeScript from a Node script: esbuild bundles an entry
// (packages stay external, Node loads them) to node_modules/.cache and imports it.
import { build } from "esbuild";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const root = new URL("..", import.meta.url).pathname;

/** @param {string} name cache file name @param {string} contents an ES module re-exporting what you need */
export async function importTs(name, contents) {
  const outfile = join(root, "node_modules/.cache", `${name}.mjs`);
  await build({ stdin: { contents, resolveDir: root, loader: "ts" }, bundle: true, packages: "external", platform: "node", format: "esm", outfile, logLevel: "error" });
  return import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);
}
