/**
 * The edgework package versions a run ran under. Owns the `run` row's edgework_version
 * (written with the run's insert, by controls.ts) and the `meta` row `resumed_under`.
 * Needs the SQL only.
 */

import type { Sql } from "../sql";

/** What GET /runs/:id and the run page show of them. */
export interface RunVersionsView {
  /** The version the run started under (null: started before versions were recorded). */
  edgework_version: string | null;
  /** The version of its latest activation, once one ran under another version than it started under (an upgrade, or a rollback after); else null. */
  resumed_under: string | null;
}

export class RunVersions {
  /** The version this instance last recorded or found the run under: later activations under it read nothing. */
  private current: string | undefined;

  constructor(private readonly sql: Sql) {}

  view(): RunVersionsView {
    return { edgework_version: this.startedUnder(), resumed_under: this.resumedUnder() };
  }

  /**
   * Each activation names the deploy's version: recorded when it is not the one the run
   * last ran under (one row, once per version change; nothing while the version stays).
   */
  activatedUnder(version: string): void {
    if (version === this.current) return;
    if (version !== (this.resumedUnder() ?? this.startedUnder())) this.sql.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('resumed_under', ${version})`;
    this.current = version;
  }

  private startedUnder(): string | null {
    return this.sql.one<{ v: string | null }>`SELECT edgework_version AS v FROM run`?.v ?? null;
  }

  private resumedUnder(): string | null {
    return this.sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'resumed_under'`?.value ?? null;
  }
}
