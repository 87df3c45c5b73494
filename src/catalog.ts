import { CatalogError, checkCatalog, type Catalog, type CodeFunction } from "./engine";
import { functions as appFunctions } from "./functions/index";
import { workerFiles } from "./generated/worker-files";
import { kinds } from "./toolsets";
import { parseTriggers, type EmailTrigger, type ScheduledTrigger, type Trigger, type Triggers } from "./triggers/triggers-file";
import { WorkerFileError } from "./engine/errors";
import { parseModelsFiles, providerNames, type ModelsConfig } from "./engine/model/providers";

type App = { catalog: Catalog; triggers: Triggers; schedules: ReadonlyMap<string, ScheduledTrigger>; emails: ReadonlyMap<string, EmailTrigger>; models: ModelsConfig };
let loaded: App | undefined;

/**
 * Loads the bundled files once per isolate: `models.yaml` (providers, prices), the
 * workers (whose models must name a known provider) and code functions, then every
 * `triggers.yaml`. Any problem in any file refuses the whole catalog (`CatalogError`).
 * The bundled functions go with the bundled files: other files get only the functions given.
 */
export function loadApp(files: Record<string, string> = workerFiles, functions: readonly CodeFunction[] = files === workerFiles ? appFunctions : []): App {
  const models = parseModelsFiles(files);
  const checked = checkCatalog(files, kinds, providerNames(models.config), functions);
  const { catalog, mayMeanRefused } = checked;
  const problems: WorkerFileError[] = [...models.problems, ...checked.problems];
  const triggers = new Map<string, Trigger>();
  const schedules = new Map<string, ScheduledTrigger>();
  const emails = new Map<string, EmailTrigger>();
  const defined = (name: string) => triggers.has(name) || schedules.has(name) || emails.has(name);
  const byAddress = new Map<string, string>();
  for (const [file, text] of Object.entries(files)) {
    if (!/(^|\/)triggers\.yaml$/.test(file)) continue;
    const parsed = parseTriggers(file, text, catalog, mayMeanRefused);
    problems.push(...parsed.problems);
    const add = <T>(map: Map<string, T>, name: string, t: T) => {
      if (defined(name)) problems.push(new WorkerFileError(file, name, `trigger "${name}" is defined twice`));
      else map.set(name, t);
    };
    for (const [name, t] of parsed.triggers) add(triggers, name, t);
    for (const [name, t] of parsed.schedules) add(schedules, name, t);
    for (const [name, t] of parsed.emails) {
      // One address, one trigger: the envelope recipient picks it.
      const taken = byAddress.get(t.email.to);
      if (taken) problems.push(new WorkerFileError(file, `${name}.email.to`, `${t.email.to} is already the address of trigger "${taken}"`));
      else add(emails, name, t), byAddress.set(t.email.to, name);
    }
  }
  if (problems.length) throw new CatalogError(problems);
  return { catalog, triggers, schedules, emails, models: models.config };
}

export const catalog = (): Catalog => (loaded ??= loadApp()).catalog;
export const triggers = (): Triggers => (loaded ??= loadApp()).triggers;
export const models = (): ModelsConfig => (loaded ??= loadApp()).models;
export const scheduleTriggers = () => (loaded ??= loadApp()).schedules;
export const emailTriggers = () => (loaded ??= loadApp()).emails;
