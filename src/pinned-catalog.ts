import { catalog, catalogVersion, checkDefinitions, deployedKinds, reachableFiles, type Definitions } from "./catalog";
import { RunError, type ToolsetRegistry } from "./engine";
import { parseJson } from "./engine/data-files";

/** The definitions a run may reach, as bundled (JSON data: src/build/yaml.ts), and the catalog version it was taken from. */
export interface CatalogSnapshot {
  version: string;
  files: Record<string, string>;
}

/** At run start: what a run of `root` may reach in the current deploy. */
export async function snapshotFor(root: string): Promise<CatalogSnapshot> {
  return { version: await catalogVersion(), files: reachableFiles(root) };
}

/** Per isolate and deploy (its kinds): a snapshot's definitions by version and root, parsed once. */
const parsed = new WeakMap<ToolsetRegistry, Map<string, Definitions | RunError>>();

/**
 * A run's definitions from its snapshot, checked against this deploy's toolset
 * kinds: the texts are pinned, the kinds' code is not. When this deploy cannot
 * run them (a kind removed, its config changed) the answer is a `RunError` that
 * names each problem and says the catalog changed after the run started.
 * A worker reached only by name at run time (`ctx.callWorker`) is not in the
 * snapshot: it comes from the current catalog.
 */
export function pinnedDefinitions(root: string, snapshot: CatalogSnapshot): Definitions | RunError {
  const kinds = deployedKinds();
  const cache = parsed.get(kinds) ?? new Map<string, Definitions | RunError>();
  parsed.set(kinds, cache);
  const key = `${snapshot.version}\n${root}`;
  let found = cache.get(key);
  if (!found) {
    const checked = checkDefinitions(snapshot.files, parseJson, kinds);
    found = checked.problems.length
      ? new RunError(
          "config",
          `this deploy cannot run the definitions this run started on: ${checked.problems.map((p) => p.message).join("; ")} (the run started on catalog ${snapshot.version}; it changed since)`,
        )
      : { models: checked.models, catalog: { ...checked.catalog, get: (name) => checked.catalog.get(name) ?? catalog().get(name) } };
    cache.set(key, found);
  }
  return found;
}
