// Refuses a bad catalog, or crons that wrangler.toml and triggers.yaml disagree on,
// with every problem listed, writing nothing (cli/catalog.mjs; `edgework check`).
import { checkCatalog } from "../cli/catalog.mjs";

const { problems, summary } = await checkCatalog();
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(summary);
