import { CatalogError, checkCatalog, type Catalog } from "./engine";
import { workerFiles } from "./generated/worker-files";
import { kinds } from "./toolsets";
import { parseTriggers, type Trigger, type Triggers } from "./triggers/triggers-file";
import { WorkerFileError } from "./engine/errors";

let loaded: { catalog: Catalog; triggers: Triggers } | undefined;

/**
 * Loads the bundled files once per isolate: the workers, then every `triggers.yaml`.
 * Any problem in any file refuses the whole catalog (`CatalogError`).
 */
export function loadApp(files: Record<string, string> = workerFiles): { catalog: Catalog; triggers: Triggers } {
  const { catalog, problems, mayMeanRefused } = checkCatalog(files, kinds);
  const triggers = new Map<string, Trigger>();
  for (const [file, text] of Object.entries(files)) {
    if (!/(^|\/)triggers\.yaml$/.test(file)) continue;
    const parsed = parseTriggers(file, text, catalog, mayMeanRefused);
    problems.push(...parsed.problems);
    for (const [name, t] of parsed.triggers) {
      if (triggers.has(name)) problems.push(new WorkerFileError(file, name, `trigger "${name}" is defined twice`));
      else triggers.set(name, t);
    }
  }
  if (problems.length) throw new CatalogError(problems);
  return { catalog, triggers };
}

export const catalog = (): Catalog => (loaded ??= loadApp()).catalog;
export const triggers = (): Triggers => (loaded ??= loadApp()).triggers;
