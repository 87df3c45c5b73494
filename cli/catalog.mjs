// The catalog at build time: the files under a project's workers/ (worker files,
// triggers.yaml, models.yaml) checked as the app would check them (every problem,
// with YAML line numbers), then bundled as JSON into a TypeScript module, a map of
// relative path → text: the app has no filesystem at runtime, so the catalog is
// compiled in, and it parses the JSON (src/build/yaml.ts), so `yaml` stays out of
// the deployed bundle. Paths are the project's (the working directory by default);
// the checking code is edgework's own (cli/import-ts.mjs).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { importTs, projectExport } from "./import-ts.mjs";

/** What `edgework build` writes and reads unless told otherwise (relative to the project). */
export const DEFAULTS = { dirs: ["workers"], out: "src/edgework.generated.ts", functions: "src/functions/index.ts", toolsets: "src/toolsets/index.ts" };

/** A catalog that does not load: `message` lists every problem. */
export class CatalogProblems extends Error {}

function walk(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
}

/** The catalog files under `dirs`, by path relative to the project. A missing folder is a problem, not an empty catalog. */
export function readSources(project, dirs) {
  const missing = dirs.filter((d) => !existsSync(join(project, d)));
  if (missing.length) throw new CatalogProblems(missing.map((d) => `${d}/: no such folder in ${project}`).join("\n"));
  return Object.fromEntries(
    dirs
      .flatMap((d) => walk(join(project, d)))
      .filter((p) => p.endsWith(".worker") || p.endsWith(".yaml"))
      .map((p) => [relative(project, p), readFileSync(p, "utf8")]),
  );
}

/**
 * edgework's checking code, with the project's code functions (`functionsModule`) and
 * toolset kinds (`toolsetsModule`: `export const toolsets = { kindName: defineToolset(...) }`,
 * what its src/index.ts passes to createApp), each relative to the project and none when absent.
 */
async function checker(project, functionsModule, toolsetsModule) {
  return importTs(
    "catalog-checker",
    `export { loadApp, installDeploy } from "./src/catalog"; export { appKinds } from "./src/engine/toolsets/app-kinds"; export { parseYaml, bundledFiles } from "./src/build/yaml";
     export { varNamesInWranglerToml } from "./src/build/wrangler-vars"; export { cronsInWranglerToml, cronMismatches } from "./src/triggers/wrangler-crons";
     ${projectExport(project, functionsModule, "functions", "[]")} ${projectExport(project, toolsetsModule, "toolsets", "{}")}`,
  );
}

const wranglerToml = (project) => {
  const path = join(project, "wrangler.toml");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};

/** Every problem of the catalog, loaded as the app loads it. Throws CatalogProblems; returns the loaded app and the bundled files. */
function load(t, sources) {
  try {
    t.installDeploy({ files: sources, kinds: t.appKinds(t.toolsets), functions: t.functions });
    const app = t.loadApp(sources, t.parseYaml, t.functions);
    // What the deployed app reads: the JSON, loaded the app's way (parse left to its default).
    const files = t.bundledFiles(sources);
    t.loadApp(files, undefined, t.functions);
    return { app, files };
  } catch (err) {
    throw new CatalogProblems(err.message);
  }
}

/** wrangler.toml must schedule exactly the crons the triggers use. */
function cronProblems(t, app, toml) {
  const problems = t.cronMismatches(app.schedules.values(), t.cronsInWranglerToml(toml));
  return problems.length ? [`wrangler.toml and triggers.yaml disagree:\n${problems.map((p) => `  ${p}`).join("\n")}`] : [];
}

const summary = ({ catalog, triggers, schedules, emails, slacks }) =>
  `catalog ok: ${catalog.workers.size} workers, ${triggers.size} webhook, ${schedules.size} scheduled, ${emails.size} email and ${slacks.size} slack triggers`;

/**
 * Checks and bundles: writes `out`, the module a Worker passes to createApp: `files` (the
 * catalog), `wranglerVars` (the names of wrangler.toml's [vars], the values runs may show),
 * and the project's `functions` and `toolsets`.
 * With `crons`, also refuses crons that wrangler.toml and triggers.yaml disagree on
 * (the test pool bundles fixtures whose schedules no wrangler.toml lists).
 * Returns the one-line summary; throws CatalogProblems listing every problem.
 */
export async function bundleCatalog({
  project = process.cwd(),
  dirs = DEFAULTS.dirs,
  out = DEFAULTS.out,
  functions = DEFAULTS.functions,
  toolsets = DEFAULTS.toolsets,
  crons = false,
} = {}) {
  const t = await checker(project, functions, toolsets);
  const { app, files } = load(t, readSources(project, dirs));
  const toml = wranglerToml(project);
  const problems = crons ? cronProblems(t, app, toml) : [];
  if (problems.length) throw new CatalogProblems(problems.join("\n"));
  const outPath = resolve(project, out);
  mkdirSync(dirname(outPath), { recursive: true });
  const text = `// Generated by edgework build from ${dirs.join(", ")} and wrangler.toml [vars]. Do not edit.
export const files: Record<string, string> = ${JSON.stringify(files, null, 2)};
export const wranglerVars: readonly string[] = ${JSON.stringify(t.varNamesInWranglerToml(toml))};
${projectModule(project, outPath, functions, "functions", "[] as const")}
${projectModule(project, outPath, toolsets, "toolsets", "{}")}
`;
  // Unchanged: not written. Changed: written whole, then moved into place — a reader (a bundler, a test
  // run beside this build) never sees half a module.
  if (!existsSync(outPath) || readFileSync(outPath, "utf8") !== text) {
    const partial = `${outPath}.${process.pid}.partial`;
    writeFileSync(partial, text);
    renameSync(partial, outPath);
  }
  return summary(app);
}

/**
 * The generated module hands createApp the project's functions and kinds too, so that
 * adding `src/functions/index.ts` needs no edit of `src/index.ts`: a re-export when the
 * module exists, else an empty one.
 */
function projectModule(project, outPath, module, name, empty) {
  const path = resolve(project, module);
  if (!existsSync(path)) return `export const ${name} = ${empty};`;
  const spec = relative(dirname(outPath), path).replace(/\\/g, "/").replace(/\.ts$/, "");
  return `export { ${name} } from ${JSON.stringify(spec.startsWith(".") ? spec : `./${spec}`)};`;
}

/** Every problem at once (catalog and crons), writing nothing: `problems` is empty and `summary` set when the catalog is fine. */
export async function checkCatalog({ project = process.cwd(), dirs = DEFAULTS.dirs, functions = DEFAULTS.functions, toolsets = DEFAULTS.toolsets } = {}) {
  try {
    const t = await checker(project, functions, toolsets);
    const { app } = load(t, readSources(project, dirs));
    const problems = cronProblems(t, app, wranglerToml(project));
    return { problems, summary: problems.length ? null : summary(app) };
  } catch (err) {
    if (err instanceof CatalogProblems) return { problems: [err.message], summary: null };
    throw err;
  }
}
