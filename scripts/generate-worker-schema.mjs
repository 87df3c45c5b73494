// Writes schemas/worker.schema.json from the zod schema that parses worker files
// (and the registered toolset kinds). `npm run schema`; a test checks it is current.
import { build } from "esbuild";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "node_modules/.cache/edgework-schema.mjs");
await build({
  stdin: {
    contents: `export { workerFileJsonSchema } from "./src/engine/worker-schema"; export { kinds } from "./src/toolsets";`,
    resolveDir: root,
    loader: "ts",
  },
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  outfile: out,
  logLevel: "error",
});
const { workerFileJsonSchema, kinds } = await import(pathToFileURL(out).href);
mkdirSync(join(root, "schemas"), { recursive: true });
writeFileSync(join(root, "schemas/worker.schema.json"), JSON.stringify(workerFileJsonSchema(kinds), null, 2) + "\n");
console.log("wrote schemas/worker.schema.json");
