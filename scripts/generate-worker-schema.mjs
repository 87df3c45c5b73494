// Writes schemas/worker.schema.json (cli/schema.mjs; `edgework schema`). `npm run schema`; a test checks it is current.
import { writeWorkerSchema } from "../cli/schema.mjs";

await writeWorkerSchema();
console.log("wrote schemas/worker.schema.json");
