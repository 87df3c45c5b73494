import type { Scope, StateBackend, StateKV } from "../src/engine";
import { json, parse, type Sql } from "./sql";

/** Toolset state in the owning Durable Object's SQLite (the `files` kind lives here too). */
export class SqliteStateBackend implements StateBackend {
  constructor(private readonly sql: Sql) {}

  open(scope: Scope, scopeId: string, namespace: string): StateKV {
    const sql = this.sql;
    return {
      async get(key) {
        const row = sql.one`SELECT value FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key = ${key}`;
        return row ? parse(row.value) : undefined;
      },
      async put(key, value) {
        sql.run`INSERT OR REPLACE INTO state (scope, scope_id, namespace, key, value) VALUES (${scope}, ${scopeId}, ${namespace}, ${key}, ${json(value)})`;
      },
      async delete(key) {
        return sql.all`DELETE FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key = ${key} RETURNING key`.length > 0;
      },
      async list(prefix = "") {
        // Range scan on the primary key: key >= prefix AND key < prefix + U+FFFF.
        return sql
          .all`SELECT key, value FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key >= ${prefix} AND key < ${prefix + "\uffff"} ORDER BY key`
          .map((r): [string, unknown] => [r.key as string, parse(r.value)]);
      },
    };
  }

  async clear(scope: Scope, scopeId: string, opts: { prefix?: boolean } = {}): Promise<void> {
    if (opts.prefix) this.sql.run`DELETE FROM state WHERE scope = ${scope} AND scope_id >= ${scopeId} AND scope_id < ${scopeId + "\uffff"}`;
    else this.sql.run`DELETE FROM state WHERE scope = ${scope} AND scope_id = ${scopeId}`;
  }
}
