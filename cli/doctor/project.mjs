// What `edgework doctor` reads of a project: its wrangler configuration (through
// wrangler's own reader: wrangler.toml, wrangler.json or wrangler.jsonc), the names in
// .dev.vars (never the values), workers/triggers.yaml and the worker files' approval
// addresses. Nothing here judges; checks.mjs does.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";

const CONFIG_FILES = ["wrangler.jsonc", "wrangler.json", "wrangler.toml"];

/** wrangler as the project has it (its devDependency), else the one beside edgework. */
async function wrangler(project) {
  let path;
  try {
    path = createRequire(join(project, "package.json")).resolve("wrangler");
  } catch {
    path = createRequire(import.meta.url).resolve("wrangler");
  }
  return import(pathToFileURL(path).href);
}

/** The raw configuration as written (no defaults filled in: an absent `workers_dev` is not `false`), and its file. */
async function readConfig(project) {
  const file = CONFIG_FILES.map((f) => join(project, f)).find((f) => existsSync(f));
  if (!file) return { file: null, config: null };
  const { experimental_readRawConfig } = await wrangler(project);
  const { rawConfig } = experimental_readRawConfig({ config: file });
  return { file: relative(project, file), config: rawConfig };
}

/** The names set in .dev.vars (`NAME=value` lines); values are not kept. */
function devVarNames(project) {
  const path = join(project, ".dev.vars");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((line) => /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1])
    .filter(Boolean);
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const frontmatter = (text) => /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1];
const safeYaml = (text) => {
  try {
    return parseYaml(text) ?? {};
  } catch {
    return {};
  }
};
const strings = (v) => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => typeof x === "string");

/** Addresses the worker files mail (approval.notify, approval.escalate_to), with the file each comes from. */
function approvalAddresses(project, dirs) {
  const out = [];
  for (const dir of dirs.map((d) => join(project, d)).filter((d) => existsSync(d))) {
    for (const file of walk(dir).filter((f) => f.endsWith(".worker"))) {
      const fm = frontmatter(readFileSync(file, "utf8"));
      const approval = fm ? safeYaml(fm).approval : undefined;
      if (!approval || typeof approval !== "object") continue;
      for (const key of ["notify", "escalate_to"])
        for (const address of strings(approval[key])) out.push({ address: address.toLowerCase(), where: `${relative(project, file)} approval.${key}` });
    }
  }
  return out;
}

/** workers/triggers.yaml: webhook secrets, email triggers' addresses and whether they converse. */
function readTriggers(project, dirs) {
  const secrets = [];
  const emails = [];
  for (const dir of dirs) {
    const path = join(project, dir, "triggers.yaml");
    if (!existsSync(path)) continue;
    for (const [name, t] of Object.entries(safeYaml(readFileSync(path, "utf8")))) {
      if (typeof t?.verify?.secret_env === "string") secrets.push({ name: t.verify.secret_env, where: `triggers.yaml ${name}.verify.secret_env` });
      if (typeof t?.email?.to === "string") emails.push({ trigger: name, to: t.email.to.toLowerCase(), reply: t.email.reply === true });
    }
  }
  return { secrets, emails };
}

/** Everything the checks look at, read from the project folder. */
export async function readProject(project, dirs = ["workers"]) {
  const { file, config } = await readConfig(project);
  return { file, config, devVars: devVarNames(project), approvals: approvalAddresses(project, dirs), triggers: readTriggers(project, dirs) };
}
