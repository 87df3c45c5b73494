// Builds dist/ for `npm pack` (prepack): each published entry as ESM JavaScript, the
// shared code in chunks (so edgework/testing's client and edgework/client are one
// module: `instanceof ConflictError` holds across them), and its .d.ts by tsc: the
// client and testing entries' beside their JS, the "." entry's (Worker code, typed
// by worker-configuration.d.ts) under dist/types. And the API's OpenAPI document
// (edgework/openapi.json), as GET /openapi.json serves it, less the server's URL.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { importTs, root } from "../cli/import-ts.mjs";
import { addDtsExtensions } from "./dts-extensions.mjs";

const ENTRIES = ["src/edgework.ts", "src/client/index.ts", "src/testing/index.ts", "src/testing/model-server.ts"];
// Reached through worker-configuration.d.ts (its Env names the app's entry), not part of the package: this repository's own app.
const OWN_APP_TYPES = ["src/index.d.ts", "src/edgework.generated.d.ts", "src/functions", "src/toolsets"];

rmSync(join(root, "dist"), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outbase: "src",
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  packages: "external",
  // The Workers runtime's modules; the user's wrangler bundles them with the rest.
  external: ["node:*", "cloudflare:*"],
  logLevel: "error",
});
const tsc = (config) => execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", config], { cwd: root, stdio: "inherit" });
tsc("tsconfig.build.json");
tsc("tsconfig.build-app.json");
for (const path of OWN_APP_TYPES) rmSync(join(root, "dist/types", path), { recursive: true, force: true });
addDtsExtensions(join(root, "dist"));
const { openApiDocument, EDGEWORK_VERSION } = await importTs(
  "openapi-document",
  'export { openApiDocument } from "./src/api/openapi.ts"; export { EDGEWORK_VERSION } from "./src/version.ts";',
);
writeFileSync(join(root, "dist/openapi.json"), `${JSON.stringify(openApiDocument(EDGEWORK_VERSION), null, 2)}\n`);
