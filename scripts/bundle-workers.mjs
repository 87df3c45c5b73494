// Checks and bundles the catalog (cli/catalog.mjs) for this repository's npm scripts
// and the test setup, without the cron check of `edgework build`: the test pool's
// fixtures schedule crons no wrangler.toml lists. Arguments as `edgework build`'s
// (cli/build-args.mjs); `--out` lets the test pool keep its own copy, so a
// `wrangler dev` started by another test cannot rewrite it under it.
import { buildArgs } from "../cli/build-args.mjs";
import { bundleCatalog, CatalogProblems } from "../cli/catalog.mjs";

try {
  await bundleCatalog(buildArgs(process.argv.slice(2)));
} catch (err) {
  if (!(err instanceof CatalogProblems)) throw err;
  console.error(err.message);
  process.exit(1);
}
