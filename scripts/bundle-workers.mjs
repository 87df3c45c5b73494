// Checks and bundles the catalog (cli/catalog.mjs) for this repository's npm scripts
// and the test setup; `edgework build` does the same for a user's project.
// Arguments (or EDGEWORK_WORKER_DIRS, comma-separated) name other folders to
// bundle instead: the tests add their fixtures. `--out <file>` writes elsewhere (the
// test pool keeps its own copy, so a `wrangler dev` started by another test cannot
// rewrite it under it); `--functions <module>`: the code functions the files may name.
import { bundleCatalog, CatalogProblems, DEFAULTS } from "../cli/catalog.mjs";

const args = process.argv.slice(2);
const option = (flag, fallback) => {
  const at = args.indexOf(flag);
  return at >= 0 ? args.splice(at, 2)[1] : fallback;
};
const out = option("--out", DEFAULTS.out);
const functions = option("--functions", DEFAULTS.functions);
const fromEnv = process.env.EDGEWORK_WORKER_DIRS?.split(",").filter(Boolean) ?? [];
const dirs = args.length ? args : fromEnv.length ? fromEnv : DEFAULTS.dirs;
try {
  await bundleCatalog({ dirs, out, functions });
} catch (err) {
  if (!(err instanceof CatalogProblems)) throw err;
  console.error(err.message);
  process.exit(1);
}
