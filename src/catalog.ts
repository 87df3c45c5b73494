import { loadCatalog, type Catalog } from "./engine";
import { workerFiles } from "./generated/worker-files";
import { kinds } from "./toolsets";

let loaded: Catalog | undefined;

/** The bundled catalog, loaded once per isolate; a bad catalog throws `CatalogError`. */
export function catalog(): Catalog {
  return (loaded ??= loadCatalog(workerFiles, kinds));
}
