// Loads the bundled catalog (workers and triggers; the JSON that
// scripts/bundle-workers.mjs made of the checked YAML) the way the app will, so
// `wrangler dev` / `wrangler deploy` refuse a bad one with every problem listed,
// and checks that wrangler.toml schedules exactly the crons the triggers use.
import { readFileSync } from "node:fs";
import { importTs, root } from "./import-ts.mjs";

const { loadApp, cronsInWranglerToml, cronMismatches } = await importTs(
  "check-catalog",
  `export { loadApp } from "./src/catalog"; export { cronsInWranglerToml, cronMismatches } from "./src/triggers/wrangler-crons";`,
);
try {
  const { catalog, triggers, schedules, emails } = loadApp();
  const crons = cronMismatches(schedules.values(), cronsInWranglerToml(readFileSync(`${root}/wrangler.toml`, "utf8")));
  if (crons.length) throw new Error(`wrangler.toml and triggers.yaml disagree:\n${crons.map((p) => `  ${p}`).join("\n")}`);
  console.log(`catalog ok: ${catalog.workers.size} workers, ${triggers.size} webhook, ${schedules.size} scheduled and ${emails.size} email triggers`);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
