// `edgework eval [worker]`: runs the suites in evals/*.yaml against the project's
// catalog (workers/), in this process through edgework's engine (docs/evals.md),
// prints a table, writes JSON and JUnit XML, and fails under a suite's threshold.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { takeOption } from "./build-args.mjs";
import { DEFAULTS, readSources } from "./catalog.mjs";
import { importTs, projectExport } from "./import-ts.mjs";

export const EVAL_DEFAULTS = { dir: "evals", json: "test-results/evals.json", junit: "test-results/evals-junit.xml" };

/** `[worker] [--dir d] [--json file] [--junit file] [--threshold 0..1]` */
export function evalArgs(argv) {
  const args = [...argv];
  const option = (flag, fallback) => takeOption(args, flag, fallback);
  const opts = { dir: option("--dir", EVAL_DEFAULTS.dir), json: option("--json", EVAL_DEFAULTS.json), junit: option("--junit", EVAL_DEFAULTS.junit) };
  const threshold = option("--threshold", undefined);
  if (threshold !== undefined && !(Number(threshold) >= 0 && Number(threshold) <= 1)) throw new Error("--threshold: a number from 0 to 1");
  const unknown = args.find((a) => a.startsWith("--"));
  if (unknown) throw new Error(`unknown option ${unknown}`);
  if (args.length > 1) throw new Error(`one worker at most; got ${args.join(" ")}`);
  return { ...opts, threshold: threshold === undefined ? undefined : Number(threshold), worker: args[0] };
}

/** edgework's eval code, with the project's code functions and toolset kinds (none when their module does not exist). */
function evalCode(project) {
  return importTs(
    "evals",
    `export * from "./src/evals"; export { appKinds } from "./src/engine/toolsets/app-kinds"; export { parseYaml } from "./src/build/yaml";
     ${projectExport(project, DEFAULTS.functions, "functions", "[]")} ${projectExport(project, DEFAULTS.toolsets, "toolsets", "{}")}`,
  );
}

/**
 * Runs every suite (or those cases of `worker`); returns the report and the text to
 * print, having written the JSON and JUnit files. `env`: the `${NAME}` values and model keys.
 */
export async function runEvals({ project = process.cwd(), dir, json, junit, threshold, worker, env = process.env }) {
  const t = await evalCode(project);
  const folder = join(project, dir);
  if (!existsSync(folder)) throw new Error(`${dir}/: no such folder in ${project}`);
  const files = readdirSync(folder)
    .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
    .sort();
  if (!files.length) throw new Error(`${dir}/: no *.yaml suites`);
  const suites = files.map((f) => t.parseSuite(relative(project, join(folder, f)), readFileSync(join(folder, f), "utf8"), t.parseYaml));
  const chosen = worker ? suites.filter((s) => s.cases.some((c) => (c.worker ?? s.worker) === worker)) : suites;
  if (!chosen.length) throw new Error(`no case of worker "${worker}" in ${dir}/`);
  const evalEnv = { files: readSources(project, DEFAULTS.dirs), kinds: t.appKinds(t.toolsets), functions: t.functions, parse: t.parseYaml, vars: env };
  const results = [];
  for (const suite of chosen) results.push(await t.runSuite(suite, evalEnv, { worker }));
  const report = t.summarize(results, threshold);
  write(resolve(project, json), `${JSON.stringify(report, null, 2)}\n`);
  write(resolve(project, junit), t.junitXml(report));
  return { report, text: `${t.table(report)}\n\nwrote ${json} and ${junit}` };
}

/** The command: prints the table; exit code 1 when a suite is under its threshold. */
export async function evalCommand(argv) {
  const { report, text } = await runEvals(evalArgs(argv));
  console.log(text);
  if (!report.ok) process.exitCode = 1;
}

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
