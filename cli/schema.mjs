// The editor JSON Schema of worker files, from the zod schema that parses them
// (and the registered toolset kinds): `edgework schema`, `npm run schema`.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { importTs } from "./import-ts.mjs";

/** The schema as the text of a JSON file. */
export async function workerSchemaText() {
  const { workerFileJsonSchema, kinds } = await importTs(
    "worker-schema",
    `export { workerFileJsonSchema } from "./src/engine/catalog/worker-schema"; export { kinds } from "./src/toolsets";`,
  );
  return `${JSON.stringify(workerFileJsonSchema(kinds), null, 2)}\n`;
}

/** Writes the schema to `out` (relative to `project`); returns the path written, relative to the project. */
export async function writeWorkerSchema({ project = process.cwd(), out = "schemas/worker.schema.json" } = {}) {
  const path = resolve(project, out);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, await workerSchemaText());
  return relative(project, path);
}
