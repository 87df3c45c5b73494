import { definitions, type Definitions } from "../src/catalog";
import type { RunError } from "../src/engine";
import { pinnedDefinitions, type CatalogSnapshot } from "../src/pinned-catalog";
import { json, parse, type Sql } from "./sql";

/**
 * Created on its own (not in schema.ts's versioned list), so it joins objects of
 * any schema version. One row per run: written once, at start.
 */
const TABLE = `CREATE TABLE IF NOT EXISTS run_catalog (version TEXT NOT NULL, files TEXT NOT NULL)`;

/** The definitions a run started on, in its own SQLite: every activation builds its catalog from them. */
export class RunCatalog {
  constructor(private readonly sql: Sql) {
    sql.script(TABLE);
  }

  /** At start, in the run's insert transaction: one row written. */
  record(snapshot: CatalogSnapshot): void {
    this.sql.run`INSERT INTO run_catalog (version, files) VALUES (${snapshot.version}, ${json(snapshot.files)})`;
  }

  /** The catalog version the run started on; null for a run started before runs were pinned. */
  version(): string | null {
    return (this.sql.one`SELECT version FROM run_catalog`?.version as string | undefined) ?? null;
  }

  /** The run's pinned definitions (a run from before pinning: the current ones), or why this deploy cannot run them. */
  definitions(root: string): Definitions | RunError {
    const row = this.sql.one`SELECT version, files FROM run_catalog`;
    if (!row) return definitions();
    return pinnedDefinitions(root, { version: row.version as string, files: parse(row.files) });
  }
}
