/**
 * The catalog a run is pinned to. Owns the `run` row's catalog columns (and reads
 * run_catalog, the table of objects older than schema version 3). Needs the SQL only.
 */

import { definitions, type Definitions } from "../../src/catalog";
import type { RunError } from "../../src/engine";
import { pinnedDefinitions, type CatalogSnapshot } from "../../src/pinned-catalog";
import type { CatalogRow } from "../rows";
import { json, parse, type Sql } from "../sql";

/** The run row's catalog columns for a snapshot: written with the run's insert. */
export const catalogColumns = (snapshot: CatalogSnapshot | null) => ({ version: snapshot?.version ?? null, files: snapshot ? json(snapshot.files) : null });

/** The definitions a run started on, in its own SQLite: every activation builds its catalog from them. */
export class RunCatalog {
  constructor(private readonly sql: Sql) {}

  /** The catalog version the run started on; null for a run started before runs were pinned. */
  version(): string | null {
    return this.row()?.version ?? null;
  }

  /** The snapshot the run is pinned to, as a fork pinned to it starts from (null: started before runs were pinned). */
  snapshot(): CatalogSnapshot | null {
    const row = this.row();
    return row ? { version: row.version, files: parse(row.files) } : null;
  }

  /** The run's pinned definitions (a run from before pinning: the current ones), or why this deploy cannot run them. */
  definitions(root: string): Definitions | RunError {
    const row = this.row();
    if (!row) return definitions();
    return pinnedDefinitions(root, { version: row.version, files: parse(row.files) });
  }

  /**
   * Runs started before schema version 3 keep their catalog in a table of its own,
   * run_catalog (version, files), which only their objects have: nothing creates it now.
   */
  private row(): CatalogRow | undefined {
    return (
      this.sql.one<CatalogRow>`SELECT catalog_version AS version, catalog_files AS files FROM run WHERE catalog_version IS NOT NULL` ??
      (this.sql.one`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_catalog'`
        ? this.sql.one<CatalogRow>`SELECT version, files FROM run_catalog`
        : undefined)
    );
  }
}
