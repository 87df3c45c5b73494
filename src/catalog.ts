import { CatalogError, checkCatalog, type Catalog, type CodeFunction, type ToolsetRegistry } from "./engine";
import type { CatalogCheck } from "./engine/catalog/catalog";
import { reachableWorkers } from "./engine/catalog/reach";
import { parseTriggers, type EmailTrigger, type HookTrigger, type ScheduledTrigger, type SlackTrigger, type Triggers } from "./triggers/triggers-file";
import { parseJson, type ParseData } from "./engine/data-files";
import { WorkerFileError } from "./engine/errors";
import { isModelsFile, parseModelsFiles, providerNames, type ModelsConfig } from "./engine/model/providers";
import { sha256Hex } from "./engine/ids";
import { EDGEWORK_VERSION } from "./version";

type App = {
  catalog: Catalog;
  triggers: Triggers;
  schedules: ReadonlyMap<string, ScheduledTrigger>;
  emails: ReadonlyMap<string, EmailTrigger>;
  /** Slack triggers by slash command. */
  slacks: ReadonlyMap<string, SlackTrigger>;
  models: ModelsConfig;
};

/** What one deploy of the app brings: its bundled files (relative path → text) and the toolset kinds compiled in. */
export interface Deploy {
  files: Record<string, string>;
  kinds: ToolsetRegistry;
  /** Code functions compiled in (not pinned: code comes from the current deploy). */
  functions?: readonly CodeFunction[];
  /** The edgework version deployed (tests only: a version bump under a paused run); default this code's. */
  edgeworkVersion?: string;
  /** The names of wrangler.toml's [vars] (written by `edgework build`): the only values runs may show. */
  wranglerVars?: readonly string[];
}

/** The definitions a run uses: workers and model providers/prices. */
export interface Definitions {
  catalog: Catalog;
  models: ModelsConfig;
}

let installed: Deploy | undefined;
let loaded: App | undefined;
let version: Promise<string> | undefined;

/**
 * Makes `next` what this isolate treats as deployed (createApp, at the Worker's module
 * load; the pinning tests call createApp again to swap the catalog under a paused run).
 */
export function installDeploy(next: Deploy): void {
  installed = next;
  loaded = undefined;
  version = undefined;
}

/** The installed deploy; an app that never called createApp has none, and says so. */
function deployed(): Deploy {
  if (!installed) throw new Error("no edgework app is installed in this isolate: the Worker's entry must call createApp({ files }) when it loads");
  return installed;
}

export const deployedKinds = (): ToolsetRegistry => deployed().kinds;
export const deployedVarNames = (): readonly string[] => deployed().wranglerVars ?? [];

/** The edgework package version this deploy runs: a run records it when it starts and when a later one continues it. */
export const deployedVersion = (): string => installed?.edgeworkVersion ?? EDGEWORK_VERSION;

/**
 * A run pins its reachable definitions in one SQLite row (under the 2 MB row limit,
 * with room to spare): a worker whose reachable set is bigger is a catalog problem.
 */
export const MAX_PINNED_BYTES = 1024 * 1024;

/** The workers (by the workers' files), the deploy's functions and `models.yaml`s, read by `parse`, checked against `kinds`; no triggers. */
export function checkDefinitions(
  files: Record<string, string>,
  parse: ParseData,
  registry: ToolsetRegistry = deployed().kinds,
  functions: readonly CodeFunction[] = deployed().functions ?? [],
): CatalogCheck & { models: ModelsConfig } {
  const models = parseModelsFiles(files, parse);
  const checked = checkCatalog(files, registry, parse, models.problems.length ? null : providerNames(models.config), functions);
  return { ...checked, models: models.config, problems: [...models.problems, ...checked.problems] };
}

/**
 * Loads the bundled files once per isolate: `models.yaml` (providers, prices), the
 * workers (whose models must name a known provider) and code functions, then every
 * `triggers.yaml`. Any problem in any file refuses the whole catalog (`CatalogError`).
 * The bundle holds them as JSON (converted at build time); the build checks the YAML
 * sources with `parse`. The bundled functions go with the bundled files: other files
 * get only the functions given.
 */
export function loadApp(
  files: Record<string, string> = deployed().files,
  parse: ParseData = parseJson,
  functions: readonly CodeFunction[] = files === deployed().files ? (deployed().functions ?? []) : [],
): App {
  const checked = checkDefinitions(files, parse, deployed().kinds, functions);
  const { catalog, mayMeanRefused } = checked;
  const problems: WorkerFileError[] = [...checked.problems];
  if (!problems.length) problems.push(...oversizedReach(catalog, files));
  const triggers = new Map<string, HookTrigger>();
  const schedules = new Map<string, ScheduledTrigger>();
  const emails = new Map<string, EmailTrigger>();
  const slacks = new Map<string, SlackTrigger>();
  const names = new Set<string>();
  const defined = (name: string) => triggers.has(name) || schedules.has(name) || emails.has(name) || names.has(name);
  const byAddress = new Map<string, string>();
  for (const [file, text] of Object.entries(files)) {
    if (!/(^|\/)triggers\.yaml$/.test(file)) continue;
    const parsed = parseTriggers(file, text, parse, catalog, mayMeanRefused);
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
      else {
        add(emails, name, t);
        byAddress.set(t.email.to, name);
      }
    }
    for (const [name, t] of parsed.slacks) {
      // One command, one trigger: the command picks it.
      const taken = slacks.get(t.slack.command);
      if (taken) problems.push(new WorkerFileError(file, `${name}.slack.command`, `${t.slack.command} is already the command of trigger "${taken.name}"`));
      else if (defined(name)) problems.push(new WorkerFileError(file, name, `trigger "${name}" is defined twice`));
      else {
        slacks.set(t.slack.command, t);
        names.add(name);
      }
    }
  }
  if (problems.length) throw new CatalogError(problems);
  return { catalog, triggers, schedules, emails, slacks, models: checked.models };
}

const app = () => (loaded ??= loadApp());
export const catalog = (): Catalog => app().catalog;
export const triggers = (): Triggers => app().triggers;
export const models = (): ModelsConfig => app().models;
export const scheduleTriggers = () => app().schedules;
export const emailTriggers = () => app().emails;
export const slackTriggers = () => app().slacks;
export const definitions = (): Definitions => ({ catalog: catalog(), models: models() });

/**
 * The deploy's catalog version: SHA-256 of every bundled file (path and text, in
 * path order), 16 hex digits. Computed once per isolate; a run records the one it started on.
 */
export function catalogVersion(): Promise<string> {
  return (version ??= sha256Hex(JSON.stringify(Object.entries(deployed().files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))).then((h) => h.slice(0, 16)));
}

/**
 * The files a run of `root` may reach: its worker file, those of the workers it
 * lists (`workers:`, resolved, transitively) and every `models.yaml`. Empty of
 * workers for an unknown root (the run then fails as it would have).
 */
export function reachableFiles(root: string, cat: Catalog = catalog(), files: Record<string, string> = deployed().files): Record<string, string> {
  const reached: Record<string, string> = {};
  for (const w of reachableWorkers(cat, root)) reached[w.file] = files[w.file]!;
  for (const [file, text] of Object.entries(files)) if (isModelsFile(file)) reached[file] = text;
  return reached;
}

/** Every worker whose reachable set would not fit the run's snapshot row, as a catalog problem. */
function oversizedReach(cat: Catalog, files: Record<string, string>): WorkerFileError[] {
  return [...cat.workers.values()].flatMap((w) => {
    const bytes = new TextEncoder().encode(JSON.stringify(reachableFiles(w.name, cat, files))).length;
    return bytes <= MAX_PINNED_BYTES
      ? []
      : [
          new WorkerFileError(
            w.file,
            "toolsets.workers",
            `this worker, the workers it reaches and models.yaml are ${bytes} bytes as JSON; a run pins them in one row of at most ${MAX_PINNED_BYTES} bytes`,
          ),
        ];
  });
}
