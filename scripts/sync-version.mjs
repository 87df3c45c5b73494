// Writes package.json's "version" into src/version.ts, the constant the app compiles in
// (a run records it when it starts). `npm version <bump>` runs this ("version" script).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;

const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const path = join(root, "src/version.ts");
const text = readFileSync(path, "utf8");
const next = text.replace(/^export const EDGEWORK_VERSION = ".*";$/m, `export const EDGEWORK_VERSION = ${JSON.stringify(version)};`);
if (!next.includes(`EDGEWORK_VERSION = ${JSON.stringify(version)}`)) throw new Error(`${path}: no line "export const EDGEWORK_VERSION = …;" to rewrite`);
writeFileSync(path, next);
