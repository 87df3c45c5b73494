import { definitions, type Definitions } from "../src/catalog";
import type { RunError } from "../src/engine";
import { pinnedDefinitions, type CatalogSnapshot } from "../src/pinned-catalog";
import { json, parse, type Sql } from "./sql";

/**
 * Where runs started before schema version 3 keep their catalog (one row of its
 * own); later runs keep it in their run row. Created on its own (not in schema.ts's
 * versioned list), so it joins objects of any schema version.
 */
const TABLE = `CREATE TABLE IF NOT EXISTS run_catalog (version TEXT NOT NULL, files TEXT NOT NULL)`;

/** The run row's catalog columns for a snapshot: written with the run's insert. */
export const catalogColumns = (snapshot: CatalogSnapshot) => ({ version: snapshot.version, files: json(snapshot.files) });

/** The definitions a run started on, in its own SQLite: every activation builds its catalog from them. */
export class RunCatalog {
  constructor(private readonly sql: Sql) {
    sql.script(TABLE);
  }

  /** The catalog version the run started on; null for a run started before runs were pinned. */
  version(): string | null {
    return (this.row()?.version as string | undefined) ?? null;
  }

  /** The run's pinned definitions (a run from before pinning: the current ones), or why this deploy cannot run them. */
  definitions(root: string): Definitions | RunError {
    const row = this.row();
    if (!row) return definitions();
    return pinnedDefinitions(root, { version: row.version as string, files: parse(row.files) });
  }

  private row() {
    return this.sql.one`SELECT catalog_version AS version, catalog_files AS files FROM run WHERE catalog_version IS NOT NULL` ?? this.sql.one`SELECT version, files FROM run_catalog`;
  }
}
