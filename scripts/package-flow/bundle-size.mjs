// The generated project's Worker as `wrangler deploy` would upload it: `wrangler deploy
// --dry-run` in the project, and the whole upload's size as wrangler reports it, against a
// limit in KiB gzip (exit code 1 over it).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { totalUpload } from "../wrangler-upload.mjs";

const [project, limit] = process.argv.slice(2);
const output = execFileSync(join(project, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", "dist"], {
  cwd: project,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "pipe"],
});
const { rawKiB, gzipKiB } = totalUpload(output);
const within = gzipKiB <= Number(limit);
console.log(
  `bundle (wrangler's Total Upload): ${rawKiB.toFixed(0)} KiB raw, ${gzipKiB.toFixed(0)} KiB gzip (limit ${limit} KiB gzip${within ? "" : ": OVER"})`,
);
process.exitCode = within ? 0 : 1;
