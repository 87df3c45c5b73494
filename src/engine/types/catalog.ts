import type { KindCatalog } from "./kind";
import type { CatalogWorker } from "./worker";

/** The workers, functions and toolset kinds an app was built with (catalog/catalog.ts loads and checks it). */
export interface Catalog extends KindCatalog {
  /** Workers and code functions, one namespace. */
  readonly workers: ReadonlyMap<string, CatalogWorker>;
}
