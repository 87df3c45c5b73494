// Writes schemas/worker.schema.json from the zod schema that parses worker files
// (and the registered toolset kinds). `npm run schema`; a test checks it is current.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importTs, root } from "./import-ts.mjs";

const { workerFileJsonSchema, kinds } = await importTs(
  "worker-schema",
  `export { workerFileJsonSchema } from "./src/engine/catalog/worker-schema"; export { kinds } from "./src/toolsets";`,
);
mkdirSync(join(root, "schemas"), { recursive: true });
writeFileSync(join(root, "schemas/worker.schema.json"), JSON.stringify(workerFileJsonSchema(kinds), null, 2) + "\n");
console.log("wrote schemas/worker.schema.json");
