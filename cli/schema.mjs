// The editor JSON Schema of worker files, from the zod schema that parses them
// (and the toolset kinds: the built-in ones and the project's src/toolsets/index.ts):
// `edgework schema`, `npm run schema`.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { DEFAULTS } from "./catalog.mjs";
import { importTs, projectExport } from "./import-ts.mjs";

/** The schema as the text of a JSON file. */
export async function workerSchemaText({ project = process.cwd(), toolsets = DEFAULTS.toolsets } = {}) {
  const t = await importTs(
    "worker-schema",
    `export { workerFileJsonSchema } from "./src/engine/catalog/worker-schema"; export { appKinds } from "./src/engine/toolsets/app-kinds";
     ${projectExport(project, toolsets, "toolsets", "{}")}`,
  );
  return `${JSON.stringify(t.workerFileJsonSchema(t.appKinds(t.toolsets)), null, 2)}\n`;
}

/** Writes the schema to `out` (relative to `project`); returns the path written, relative to the project. */
export async function writeWorkerSchema({ project = process.cwd(), out = "schemas/worker.schema.json" } = {}) {
  const path = resolve(project, out);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, await workerSchemaText({ project }));
  return relative(project, path);
}
