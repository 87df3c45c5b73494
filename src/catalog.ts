import { CatalogError, loadCatalog, type Catalog } from "./engine";
import { workerFiles } from "./generated/worker-files";
import { kinds } from "./toolsets";
import { parseTriggers, type Trigger, type Triggers } from "./triggers/triggers-file";
import { WorkerFileError } from "./engine/errors";
import { parseModelsFiles, providerNames, type ModelsConfig } from "./engine/model/providers";

type App = { catalog: Catalog; triggers: Triggers; models: ModelsConfig };
let loaded: App | undefined;

/**
 * Loads the bundled files once per isolate: `models.yaml` (providers, prices), the
 * workers (whose models must name a known provider), then every `triggers.yaml`.
 * Any problem in any file refuses the whole catalog (`CatalogError`).
 */
export function loadApp(files: Record<string, string> = workerFiles): App {
  const models = parseModelsFiles(files);
  let catalog: Catalog;
  try {
    catalog = loadCatalog(files, kinds, providerNames(models.config));
  } catch (err) {
    throw err instanceof CatalogError && models.problems.length ? new CatalogError([...models.problems, ...err.problems]) : err;
  }
  const triggers = new Map<string, Trigger>();
  const problems: WorkerFileError[] = [...models.problems];
  for (const [file, text] of Object.entries(files)) {
    if (!/(^|\/)triggers\.yaml$/.test(file)) continue;
    const parsed = parseTriggers(file, text, catalog);
    problems.push(...parsed.problems);
    for (const [name, t] of parsed.triggers) {
      if (triggers.has(name)) problems.push(new WorkerFileError(file, name, `trigger "${name}" is defined twice`));
      else triggers.set(name, t);
    }
  }
  if (problems.length) throw new CatalogError(problems);
  return { catalog, triggers, models: models.config };
}

export const catalog = (): Catalog => (loaded ??= loadApp()).catalog;
export const triggers = (): Triggers => (loaded ??= loadApp()).triggers;
export const models = (): ModelsConfig => (loaded ??= loadApp()).models;
