// Writes a new edgework project: the template copied into a new or empty folder,
// named after the folder, its package.json depending on one exact edgework version.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { packageNameProblem } from "./package-name.mjs";
import { FROM_REPOSITORY } from "./template-files.mjs";

const pkg = fileURLToPath(new URL("..", import.meta.url));
export const TEMPLATE = join(pkg, "template");
/** npm leaves a `.gitignore` out of a package, so the template keeps it under another name. */
const RENAMED = { gitignore: ".gitignore" };
/** The template's name for the project, replaced in these files by the Worker's name. */
const TEMPLATE_NAME = "my-edgework-app";
const NAMED = ["wrangler.toml", "README.md"];

/** A project that is not written: the message says why, and nothing was. */
export class CreateError extends Error {}

/** This package's version: create-edgework and edgework are released together, so it is the edgework version a new project pins. */
export function edgeworkVersion() {
  return JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
}

/**
 * The Worker's name (wrangler.toml `name`, the queue's prefix): the package name in the
 * characters Workers and Queues accept (a-z, 0-9, -), short enough for the queue's suffix.
 */
export function workerName(name) {
  const safe = name
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 40)
    .replace(/^-+|-+$/g, "");
  return safe || "edgework-app";
}

function refuseTarget(dir, target) {
  const name = basename(target);
  const problem = packageNameProblem(name);
  if (problem) throw new CreateError(`"${name}" cannot be the project's package name (it is the folder's): ${problem}. Choose another folder name.`);
  if (!existsSync(target)) return;
  if (!statSync(target).isDirectory()) throw new CreateError(`${dir} exists and is not a folder. Nothing was written.`);
  if (readdirSync(target).length) throw new CreateError(`${dir} exists and is not empty: choose a new or empty folder. Nothing was written.`);
}

function refuseIncompleteTemplate(template) {
  const missing = Object.keys(FROM_REPOSITORY).filter((f) => !existsSync(join(template, f)));
  if (missing.length)
    throw new CreateError(`the template lacks ${missing.join(", ")}: in a checkout, run \`node scripts/sync-template.mjs\` (npm pack's prepack) first`);
}

function nameProject(target, name, version) {
  const manifest = join(target, "package.json");
  const project = JSON.parse(readFileSync(manifest, "utf8"));
  writeFileSync(manifest, `${JSON.stringify({ ...project, name, dependencies: { ...project.dependencies, edgework: version } }, null, 2)}\n`);
  for (const file of NAMED) {
    const path = join(target, file);
    writeFileSync(path, readFileSync(path, "utf8").replaceAll(TEMPLATE_NAME, workerName(name)));
  }
}

/**
 * @param {string} dir the new project's folder (new, or empty); its name becomes the package's
 * @returns {{ dir: string, name: string, version: string }}
 */
export function createProject(dir, { template = TEMPLATE, version = edgeworkVersion() } = {}) {
  const target = resolve(dir);
  refuseTarget(dir, target);
  refuseIncompleteTemplate(template);
  mkdirSync(target, { recursive: true });
  cpSync(template, target, { recursive: true });
  for (const [from, to] of Object.entries(RENAMED)) renameSync(join(target, from), join(target, to));
  const name = basename(target);
  nameProject(target, name, version);
  return { dir: target, name, version };
}
