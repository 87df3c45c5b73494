// `edgework new worker <name>`: a worker file to start from, never over an existing one.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

// The tool-name rule a worker's name must follow (src/engine/catalog/worker-file.ts, TOOL_NAME):
// other workers call it by this name.
const WORKER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const template = (name) => `---
name: ${name}
description: What ${name} does, in one line (the calling model reads it).
input:
  type: object
  properties:
    text: { type: string }
  required: [text]
---
Say what this worker is for and how it should answer.
`;

/** Writes `workers/<name>.worker` in `project`; returns its path relative to the project. Throws naming the reason. */
export function newWorker(name, { project = process.cwd(), dir = "workers" } = {}) {
  if (typeof name !== "string" || !WORKER_NAME.test(name)) {
    throw new Error(`worker name ${JSON.stringify(name ?? "")}: must be 1-64 characters of a-z A-Z 0-9 _ - (the OpenAI tool-name rule)`);
  }
  const folder = join(project, dir);
  const path = join(folder, `${name}.worker`);
  if (existsSync(path)) throw new Error(`${relative(project, path)} already exists: edit it, or choose another name`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path, template(name), { flag: "wx" });
  return relative(project, path);
}
