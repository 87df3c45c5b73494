// Gives a generated project this repository's lockfile, re-rooted on the project's
// package.json, so `npm install --offline` resolves every dependency from the npm
// cache `npm ci` just filled. Why: npm 11 resolves a dependency missing from a
// lockfile from its full registry document, which `npm ci` never caches; with a
// lockfile npm reads only what `npm ci` read. The project's dependencies are a
// subset of this repository's (tests/node/create-edgework.test.ts checks the versions);
// npm prunes the rest.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repository = fileURLToPath(new URL("../..", import.meta.url));
const project = process.argv[2];
const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(repository, "package-lock.json"), "utf8"));
const { name, version, dependencies, devDependencies } = manifest;
lock.name = name;
lock.version = version;
lock.packages[""] = { name, version, dependencies, devDependencies };
writeFileSync(join(project, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
