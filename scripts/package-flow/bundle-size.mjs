// The generated project's Worker as `wrangler deploy` would upload it: raw and gzip
// size of the bundle wrangler wrote to `outdir`, against a limit (exit code 1 over it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const [outdir, limit] = process.argv.slice(2);
// Named after wrangler.toml's main (src/index.ts).
const code = readFileSync(join(outdir, "index.js"));
const gzipKiB = gzipSync(code).length / 1024;
const within = gzipKiB <= Number(limit);
console.log(`bundle: ${(code.length / 1024).toFixed(0)} KiB raw, ${gzipKiB.toFixed(0)} KiB gzip (limit ${limit} KiB gzip${within ? "" : ": OVER"})`);
process.exitCode = within ? 0 : 1;
