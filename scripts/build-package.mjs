// Builds dist/ for `npm pack` (prepack): each published entry as ESM JavaScript, the
// shared code in chunks (so edgework/testing's client and edgework/client are one
// module: `instanceof ConflictError` holds across them), and its .d.ts by tsc.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { root } from "../cli/import-ts.mjs";
import { addDtsExtensions } from "./dts-extensions.mjs";

const ENTRIES = ["src/client/index.ts", "src/testing/index.ts", "src/testing/model-server.ts"];

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
  external: ["node:*"],
  logLevel: "error",
});
execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
addDtsExtensions(join(root, "dist"));
