// The arguments of `edgework build` / `check` and scripts/bundle-workers.mjs:
// `[--out <file>] [--functions <module>] [--toolsets <module>] [--workers <folder,...>] [folder...]`. Without folders,
// EDGEWORK_WORKER_DIRS (comma-separated) names them — how the demo and the e2e
// tests give `wrangler dev`'s [build] the test fixtures — else workers/.
import { DEFAULTS } from "./catalog.mjs";

/** Takes `flag <value>` out of `args` (mutated): its value, or `fallback` when absent; a flag without a value throws. */
export function takeOption(args, flag, fallback) {
  const at = args.indexOf(flag);
  if (at < 0) return fallback;
  const value = args.splice(at, 2)[1];
  if (!value || value.startsWith("--")) throw new Error(`${flag}: needs a value`);
  return value;
}

export function buildArgs(argv, env = process.env) {
  const args = [...argv];
  const option = (flag, fallback) => takeOption(args, flag, fallback);
  const out = option("--out", DEFAULTS.out);
  const functions = option("--functions", DEFAULTS.functions);
  const toolsets = option("--toolsets", DEFAULTS.toolsets);
  const workers = option("--workers", "").split(",").filter(Boolean);
  const unknown = args.find((a) => a.startsWith("--"));
  if (unknown) throw new Error(`unknown option ${unknown}`);
  const fromEnv = env.EDGEWORK_WORKER_DIRS?.split(",").filter(Boolean) ?? [];
  const given = [...workers, ...args];
  return { out, functions, toolsets, dirs: given.length ? given : fromEnv.length ? fromEnv : DEFAULTS.dirs };
}
