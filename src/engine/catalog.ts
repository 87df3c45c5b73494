import { CatalogError, WorkerFileError } from "./errors";
import { globToRegExp, isGlob } from "./glob";
import { validatorFor, type JSONSchema } from "./json-schema";
import { checkModelProviders } from "./model/provider-check";
import { BUILT_IN_PROVIDERS } from "./model/providers";
import type { ToolsetRegistry } from "./toolsets/define";
import type { ToolDef } from "./toolsets/toolset";
import { issuesToErrors, parseWorkerFile, TOOL_NAME, type WorkerSpec } from "./worker-file";

/** A worker as the catalog accepted it: `workers:` globs resolved to names. */
export interface CatalogWorker extends WorkerSpec {
  workerTools: string[];
}

export interface Catalog {
  readonly kinds: ToolsetRegistry;
  readonly workers: ReadonlyMap<string, CatalogWorker>;
  get(name: string): CatalogWorker | undefined;
}

/** How a worker appears as a tool to the workers that list it. */
export function workerToolDef(w: WorkerSpec): ToolDef {
  return {
    name: w.name,
    description: w.description ?? w.instructions.slice(0, 200),
    parameters: w.input,
    readOnly: false,
    // The child's own tools do the gating; `approval: {child: ask}` overrides this.
    approval: () => "allow",
  };
}

/**
 * Loads every `.worker` file of a bundle (relative path → text). A catalog with any
 * problem is refused as a whole: `CatalogError` lists each as `file: field: reason`.
 * `providers`: the model providers a worker may name (built in, plus `models.yaml`'s).
 */
export function loadCatalog(files: Record<string, string>, kinds: ToolsetRegistry, providers: readonly string[] = BUILT_IN_PROVIDERS): Catalog {
  const problems: WorkerFileError[] = [];
  const specs: WorkerSpec[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (!file.endsWith(".worker")) continue;
    try {
      specs.push(parseWorkerFile(file, text));
    } catch (errs) {
      problems.push(...(errs as WorkerFileError[]));
    }
  }

  const byName = new Map<string, WorkerSpec>();
  for (const s of specs) {
    const first = byName.get(s.name);
    if (first) problems.push(new WorkerFileError(s.file, "name", `"${s.name}" is also the name of ${first.file}; worker names are unique`));
    else byName.set(s.name, s);
  }

  const workers = new Map<string, CatalogWorker>();
  for (const s of byName.values()) {
    const before = problems.length;
    problems.push(...checkWorker(s, kinds, providers));
    const workerTools = resolveWorkerPatterns(s, byName, problems);
    if (problems.length === before) problems.push(...checkExposedTools(s, workerTools.map((n) => byName.get(n)!), kinds));
    workers.set(s.name, { ...s, workerTools });
  }
  if (problems.length) throw new CatalogError(problems);
  return { kinds, workers, get: (name) => workers.get(name) };
}

/** Checks of one worker that need no other worker: schemas, model, toolset kinds and configs. */
export function checkWorker(s: WorkerSpec, kinds: ToolsetRegistry, providers: readonly string[] = BUILT_IN_PROVIDERS): WorkerFileError[] {
  const problems: WorkerFileError[] = [];
  const schemaProblem = (field: string, schema: JSONSchema | undefined) => {
    if (!schema) return;
    try {
      validatorFor(schema);
    } catch (err) {
      problems.push(new WorkerFileError(s.file, field, `not a usable JSON Schema: ${(err as Error).message}`));
    }
  };
  schemaProblem("input", s.input);
  if (s.input.type !== "object") problems.push(new WorkerFileError(s.file, "input", 'must be a JSON Schema with type: object (tool arguments are objects)'));
  schemaProblem("output", s.output);
  problems.push(...checkModelProviders(s, providers));
  for (const [name, inst] of Object.entries(s.toolsets)) {
    const kind = kinds.get(inst.use);
    if (!kind) {
      problems.push(new WorkerFileError(s.file, `toolsets.${name}.use`, `unknown toolset kind "${inst.use}"; known: ${[...kinds.keys()].join(", ")}`));
      continue;
    }
    if (kind.dynamic && inst.scope === "global") {
      problems.push(new WorkerFileError(s.file, `toolsets.${name}.scope`, `kind "${kind.kind}" lists its tools during each run; use scope call or run, not global`));
    }
    const parsed = kind.config.safeParse(inst.config);
    if (parsed.success) inst.config = parsed.data as Record<string, unknown>;
    else problems.push(...issuesToErrors(s.file, parsed.error, `toolsets.${name}`));
  }
  return problems;
}

function resolveWorkerPatterns(s: WorkerSpec, byName: Map<string, WorkerSpec>, problems: WorkerFileError[]): string[] {
  const names = new Set<string>();
  for (const pattern of s.workers) {
    const matches = isGlob(pattern)
      ? [...byName.keys()].filter((n) => globToRegExp(pattern).test(n))
      : byName.has(pattern) ? [pattern] : [];
    if (!matches.length) {
      const reason = isGlob(pattern) ? `glob "${pattern}" matches no worker` : `unknown worker "${pattern}"`;
      problems.push(new WorkerFileError(s.file, "toolsets.workers", `${reason}; known: ${[...byName.keys()].sort().join(", ")}`));
    }
    matches.forEach((n) => names.add(n));
  }
  return [...names].sort();
}

/** Every tool name a worker exposes, from its instances and its worker tools; clashes are errors. */
export function exposedToolNames(s: WorkerSpec, workerTools: WorkerSpec[], kinds: ToolsetRegistry): Map<string, string> {
  const source = new Map<string, string>();
  const problems: WorkerFileError[] = [];
  const add = (tool: string, from: string) => {
    const other = source.get(tool);
    if (other) problems.push(new WorkerFileError(s.file, "toolsets", `tool "${tool}" is exposed by both ${other} and ${from}; rename one instance so its tools get a prefix`));
    else if (!TOOL_NAME.test(tool)) problems.push(new WorkerFileError(s.file, "toolsets", `tool name "${tool}" from ${from} breaks the tool-name rule (1-64 of a-z A-Z 0-9 _ -)`));
    else source.set(tool, from);
  };
  for (const [name, inst] of Object.entries(s.toolsets)) {
    const kind = kinds.get(inst.use)!;
    for (const def of kind.definitions) {
      if (inst.readonly && !def.readOnly) continue;
      add(name === kind.kind ? def.name : `${name}_${def.name}`, `instance "${name}" (${kind.kind})`);
    }
  }
  for (const w of workerTools) add(w.name, `worker "${w.name}" (toolsets.workers)`);
  if (problems.length) throw problems;
  return source;
}

function checkExposedTools(s: WorkerSpec, workerTools: WorkerSpec[], kinds: ToolsetRegistry): WorkerFileError[] {
  let exposed: Map<string, string>;
  try {
    exposed = exposedToolNames(s, workerTools, kinds);
  } catch (errs) {
    return errs as WorkerFileError[];
  }
  // A dynamic kind's tools are known at run time only: accept names under its instance's prefix.
  const dynamic = Object.entries(s.toolsets).filter(([, inst]) => kinds.get(inst.use)!.dynamic).map(([name, inst]) => (name === inst.use ? "" : `${name}_`));
  return Object.keys(s.approval)
    .filter((tool) => !exposed.has(tool) && !dynamic.some((prefix) => tool.startsWith(prefix)))
    .map((tool) => new WorkerFileError(s.file, `approval.${tool}`, `no tool "${tool}" in this worker; its tools: ${[...exposed.keys()].join(", ") || "(none)"}`));
}
