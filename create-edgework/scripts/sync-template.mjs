// prepack: copies the repository's triage example, its offline demo and
// .dev.vars.example into template/ (lib/template-files.mjs lists them), so the
// package carries the files the repository's own tests run.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FROM_REPOSITORY } from "../lib/template-files.mjs";

const pkg = fileURLToPath(new URL("..", import.meta.url));
const repository = join(pkg, "..");

for (const [to, from] of Object.entries(FROM_REPOSITORY)) {
  const target = join(pkg, "template", to);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(repository, from), target);
}
console.log(`template: ${Object.keys(FROM_REPOSITORY).length} files copied from the repository`);
