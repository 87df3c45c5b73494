// Loads the bundled catalog (workers and triggers) the way the app will, so
// `wrangler dev` / `wrangler deploy` refuse a bad one with every problem listed.
import { importTs } from "./import-ts.mjs";

const { loadApp } = await importTs("check-catalog", `export { loadApp } from "./src/catalog";`);
try {
  const { catalog, triggers } = loadApp();
  console.log(`catalog ok: ${catalog.workers.size} workers, ${triggers.size} triggers`);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
