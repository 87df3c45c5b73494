import { callableTool } from "./callables";
import type { ParseData } from "../data-files";
import { CatalogError, WorkerFileError } from "../errors";
import { readFunction } from "./functions";
import { globMatcher, isGlob } from "../glob";
import { validatorFor } from "../json-schema";
import { checkModelProviders } from "../model/provider-check";
import { BUILT_IN_PROVIDERS } from "../model/providers";
import { issuesToErrors, readWorkerFile, TOOL_NAME, type WorkerFileReading } from "./worker-file";
import { ruleSchemaProblems } from "../approvals/rule-schema";
import type { JSONSchema } from "../types/json-schema";
import type { ToolsetKind, ToolsetRegistry } from "../types/kind";
import type { RetryConfig } from "../toolsets/retry-config";
import type { CompensateConfig } from "../types/compensate";
import type { ToolDef } from "../types/toolset";
import type { CodeFunction, WorkerSpec } from "../types/worker";
import type { Catalog } from "../types/catalog";
import type { CatalogWorker } from "../types/worker";

/** How a worker appears as a tool to the workers that list it (`callableTool`, as the calling model sees it). */
export function workerToolDef(w: WorkerSpec): ToolDef {
  return callableTool({ name: w.name, description: w.description ?? w.instructions.slice(0, 200), input: w.input, attachments: w.attachments });
}

/**
 * Loads every `.worker` file of a bundle (relative path → text, read by `parse`). A catalog with any
 * problem is refused as a whole: `CatalogError` lists each as `file: field: reason`.
 * `providers`: the model providers a worker may name (built in, plus `models.yaml`'s);
 * null when `models.yaml` was refused, so its problems are not echoed as unknown providers.
 * `functions`: code functions, checked like worker files, in the same namespace.
 */
export function loadCatalog(
  files: Record<string, string>,
  kinds: ToolsetRegistry,
  parse: ParseData,
  providers: readonly string[] | null = BUILT_IN_PROVIDERS,
  functions: readonly CodeFunction[] = [],
): Catalog {
  const { catalog, problems } = checkCatalog(files, kinds, parse, providers, functions);
  if (problems.length) throw new CatalogError(problems);
  return catalog;
}

/** A catalog's problems, all at once, and the workers that could be read despite them. */
export interface CatalogCheck {
  catalog: Catalog;
  problems: WorkerFileError[];
  /**
   * Could a reference that resolves to no worker (given as a test of names) mean a
   * worker whose file was refused for its name? Such a reference is not reported again.
   */
  mayMeanRefused(matches: (name: string) => boolean): boolean;
}

/**
 * Every check on every file, each stage run on what the earlier ones could read,
 * so one mistake hides no other. A stage skips what an earlier problem already
 * explains (no config check for an unknown kind, no approval check when the
 * worker's tools are not all known, no "unknown worker" for what may be a worker
 * whose own name was refused).
 */
export function checkCatalog(
  files: Record<string, string>,
  kinds: ToolsetRegistry,
  parse: ParseData,
  providers: readonly string[] | null = BUILT_IN_PROVIDERS,
  functions: readonly CodeFunction[] = [],
): CatalogCheck {
  const problems: WorkerFileError[] = [];
  const readings: WorkerFileReading[] = [];
  const code = new Map<WorkerSpec, CodeFunction>();
  for (const [file, text] of Object.entries(files)) {
    if (!file.endsWith(".worker")) continue;
    readings.push(readWorkerFile(file, text, parse));
  }
  // After the files: a clash is reported at the function, naming the worker file.
  for (const fn of functions) {
    const reading = readFunction(fn);
    if (reading.spec) code.set(reading.spec, fn);
    readings.push(reading);
  }
  for (const reading of readings) problems.push(...reading.problems);
  const refusedNames = readings.filter((r) => !r.named).map((r) => r.spec?.name ?? "");
  const mayMeanRefused = (matches: (name: string) => boolean) => refusedNames.some((n) => !n || matches(n));

  const byName = new Map<string, WorkerSpec>();
  for (const { spec: s, named } of readings) {
    if (!s || !named) continue;
    const first = byName.get(s.name);
    if (first)
      problems.push(
        new WorkerFileError(
          s.file,
          "name",
          `"${s.name}" is also the name of ${first.file}; worker names are unique${code.has(s) ? " (functions share their namespace)" : ""}`,
        ),
      );
    else byName.set(s.name, s);
  }

  const workers = new Map<string, CatalogWorker>();
  for (const { spec: s, toolsetsComplete } of readings) {
    if (!s) continue;
    problems.push(...checkWorker(s, kinds, providers));
    const resolved = resolveWorkerPatterns(s, byName, mayMeanRefused);
    problems.push(...resolved.problems);
    const toolsKnown = toolsetsComplete && resolved.complete && Object.values(s.toolsets).every((i) => kinds.has(i.use));
    problems.push(
      ...checkExposedTools(
        s,
        resolved.names.map((n) => byName.get(n)!),
        kinds,
        toolsKnown,
      ),
    );
    const fn = code.get(s);
    if (byName.get(s.name) === s) workers.set(s.name, { ...s, workerTools: resolved.names, ...(fn ? { code: fn } : {}) });
  }
  return { catalog: { kinds, workers, get: (name) => workers.get(name) }, problems, mayMeanRefused };
}

/** Checks of one worker that need no other worker: schemas, model, toolset kinds and configs. */
export function checkWorker(s: WorkerSpec, kinds: ToolsetRegistry, providers: readonly string[] | null = BUILT_IN_PROVIDERS): WorkerFileError[] {
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
  if (s.input.type !== "object") problems.push(new WorkerFileError(s.file, "input", "must be a JSON Schema with type: object (tool arguments are objects)"));
  schemaProblem("output", s.output);
  if (providers) problems.push(...checkModelProviders(s, providers));
  for (const [name, inst] of Object.entries(s.toolsets)) {
    const kind = kinds.get(inst.use);
    if (!kind) {
      problems.push(new WorkerFileError(s.file, `toolsets.${name}.use`, `unknown toolset kind "${inst.use}"; known: ${[...kinds.keys()].join(", ")}`));
      continue;
    }
    if (kind.dynamic && inst.scope === "global") {
      problems.push(
        new WorkerFileError(s.file, `toolsets.${name}.scope`, `kind "${kind.kind}" lists its tools during each run; use scope call or run, not global`),
      );
    }
    if (kind.framed && inst.scope && inst.scope !== "call") {
      problems.push(new WorkerFileError(s.file, `toolsets.${name}.scope`, `kind "${kind.kind}" acts for one call of this worker; leave scope out`));
    }
    if (inst.retry) problems.push(...retryProblems(s.file, name, kind, inst.retry));
    if (inst.compensate) problems.push(...compensateProblems(s.file, name, kind, inst.compensate));
    const parsed = kind.config.safeParse(inst.config);
    if (parsed.success) inst.config = parsed.data as Record<string, unknown>;
    else problems.push(...issuesToErrors(s.file, parsed.error, `toolsets.${name}`));
    if (parsed.success && kind.checkInstance) {
      for (const p of kind.checkInstance(s, name, inst.config)) problems.push(new WorkerFileError(s.file, `toolsets.${name}.${p.field}`, p.reason));
    }
  }
  return problems;
}

/** `retry:` on a kind it can wrap, naming in `tools:` only tools the kind has (a dynamic kind's are known at run time only). */
function retryProblems(file: string, name: string, kind: ToolsetKind, retry: RetryConfig): WorkerFileError[] {
  const field = `toolsets.${name}.retry`;
  if (kind.framed) return [new WorkerFileError(file, field, `kind "${kind.kind}" runs workers: retry their toolsets instead`)];
  if (kind.dynamic) return [];
  const known = new Set(kind.definitions.map((d) => d.name));
  return Object.keys(retry.tools ?? {})
    .filter((tool) => !known.has(tool))
    .map((tool) => new WorkerFileError(file, `${field}.tools.${tool}`, `kind "${kind.kind}" has no tool "${tool}"; it has: ${[...known].join(", ")}`));
}

/** `compensate:` on a kind it can wrap, naming tools the kind has, each undone by another of its tools. */
function compensateProblems(file: string, name: string, kind: ToolsetKind, compensate: CompensateConfig): WorkerFileError[] {
  const field = `toolsets.${name}.compensate`;
  if (kind.framed) return [new WorkerFileError(file, field, `kind "${kind.kind}" runs workers: compensate their toolsets instead`)];
  const problems: WorkerFileError[] = [];
  const known = kind.dynamic ? undefined : new Set(kind.definitions.map((d) => d.name));
  const unknown = (tool: string) => `kind "${kind.kind}" has no tool "${tool}"; it has: ${[...known!].join(", ")}`;
  for (const [tool, undo] of Object.entries(compensate)) {
    if (known && !known.has(tool)) problems.push(new WorkerFileError(file, `${field}.${tool}`, unknown(tool)));
    if (known && !known.has(undo.tool)) problems.push(new WorkerFileError(file, `${field}.${tool}.tool`, unknown(undo.tool)));
  }
  return problems;
}

/** `workers:` names and globs → worker names; `complete` when every one resolved. */
function resolveWorkerPatterns(s: WorkerSpec, byName: Map<string, WorkerSpec>, mayMeanRefused: CatalogCheck["mayMeanRefused"]) {
  const names = new Set<string>();
  const problems: WorkerFileError[] = [];
  let complete = true;
  for (const pattern of s.workers) {
    let matchesName: (name: string) => boolean;
    try {
      matchesName = isGlob(pattern) ? globMatcher(pattern) : (n: string) => n === pattern;
    } catch (err) {
      problems.push(new WorkerFileError(s.file, "toolsets.workers", (err as Error).message));
      complete = false;
      continue;
    }
    const matches = [...byName.keys()].filter(matchesName);
    if (!matches.length) {
      complete = false;
      if (mayMeanRefused(matchesName)) continue;
      const reason = isGlob(pattern) ? `glob "${pattern}" matches no worker` : `unknown worker "${pattern}"`;
      problems.push(new WorkerFileError(s.file, "toolsets.workers", `${reason}; known: ${[...byName.keys()].sort().join(", ") || "(none)"}`));
    }
    for (const n of matches) names.add(n);
  }
  return { names: [...names].sort(), problems, complete };
}

/** A tool a worker exposes: where it comes from (for errors), and its parameters. */
export interface ExposedTool {
  from: string;
  parameters: JSONSchema;
}

/** Every tool a worker exposes, by name, from its instances and its worker tools; clashes are errors. */
export function exposedToolNames(s: WorkerSpec, workerTools: WorkerSpec[], kinds: ToolsetRegistry): Map<string, ExposedTool> {
  const source = new Map<string, ExposedTool>();
  const problems: WorkerFileError[] = [];
  const add = (tool: string, from: string, parameters: JSONSchema) => {
    const other = source.get(tool);
    if (other)
      problems.push(
        new WorkerFileError(s.file, "toolsets", `tool "${tool}" is exposed by both ${other.from} and ${from}; rename one instance so its tools get a prefix`),
      );
    else if (!TOOL_NAME.test(tool))
      problems.push(new WorkerFileError(s.file, "toolsets", `tool name "${tool}" from ${from} breaks the tool-name rule (1-64 of a-z A-Z 0-9 _ -)`));
    else source.set(tool, { from, parameters });
  };
  for (const [name, inst] of Object.entries(s.toolsets)) {
    const kind = kinds.get(inst.use);
    if (!kind) continue; // reported by checkWorker
    for (const def of kind.definitions) {
      if (inst.readonly && !def.readOnly) continue;
      add(name === kind.kind ? def.name : `${name}_${def.name}`, `instance "${name}" (${kind.kind})`, def.parameters);
    }
  }
  for (const w of workerTools) add(w.name, `worker "${w.name}" (toolsets.workers)`, workerToolDef(w).parameters);
  if (problems.length) throw problems;
  return source;
}

/**
 * Tool-name clashes, and (when all of the worker's tools are known) approval entries
 * naming no tool, and approval rules that do not fit the input of the tool they are on.
 */
function checkExposedTools(s: WorkerSpec, workerTools: WorkerSpec[], kinds: ToolsetRegistry, toolsKnown: boolean): WorkerFileError[] {
  let exposed: Map<string, ExposedTool>;
  try {
    exposed = exposedToolNames(s, workerTools, kinds);
  } catch (errs) {
    return errs as WorkerFileError[];
  }
  if (!toolsKnown) return [];
  // A dynamic kind's tools are known at run time only: accept names under its instance's prefix.
  const dynamic = Object.entries(s.toolsets)
    .filter(([, inst]) => kinds.get(inst.use)!.dynamic)
    .map(([name, inst]) => (name === inst.use ? "" : `${name}_`));
  const problems = Object.keys(s.approval)
    .filter((tool) => !exposed.has(tool) && !dynamic.some((prefix) => tool.startsWith(prefix)))
    .map(
      (tool) => new WorkerFileError(s.file, `approval.${tool}`, `no tool "${tool}" in this worker; its tools: ${[...exposed.keys()].join(", ") || "(none)"}`),
    );
  // A dynamic kind's tools are listed at run time: no schema to check against (what cannot be compared fails closed).
  for (const [tool, policy] of Object.entries(s.approval)) {
    const parameters = exposed.get(tool)?.parameters;
    if (typeof policy === "string" || !parameters) continue;
    for (const p of ruleSchemaProblems(policy, parameters)) problems.push(new WorkerFileError(s.file, `approval.${tool}.${p.field}`, p.reason));
  }
  return problems;
}
