import { StorageError, type Scope, type StateBackend, type StateKV } from "../src/engine";
import type { StateRow } from "./rows";
import { json, parse, type Sql } from "./sql";
import { PERMANENT } from "./sqlite-journal";

/**
 * What SQLite refused, as the engine's `StorageError`: it stops the activation
 * instead of reaching a model as a tool's result, and fails the run at once when a
 * retry would write the same (a row over the limit, a full database).
 */
function stored<T>(what: string, op: () => T): T {
  try {
    return op();
  } catch (err) {
    // SQLite's reason without the statement (which carries no values, but is noise in a run's error).
    const reason = (err as Error).message.split("\n")[0]!.replace(/^SQL failed: /, "");
    throw new StorageError(`toolset state could not ${what}: ${reason}`, PERMANENT.test(reason), { cause: err });
  }
}

/** Toolset state in the owning Durable Object's SQLite (the `files` kind lives here too). */
export class SqliteStateBackend implements StateBackend {
  constructor(private readonly sql: Sql) {}

  open(scope: Scope, scopeId: string, namespace: string): StateKV {
    const sql = this.sql;
    return {
      async get(key) {
        const row = stored(
          `read ${key}`,
          () =>
            sql.one<
              Pick<StateRow, "value">
            >`SELECT value FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key = ${key}`,
        );
        return row ? parse(row.value) : undefined;
      },
      async put(key, value) {
        const text = json(value);
        stored(
          `write ${key} (${text.length} characters)`,
          () => sql.run`INSERT OR REPLACE INTO state (scope, scope_id, namespace, key, value) VALUES (${scope}, ${scopeId}, ${namespace}, ${key}, ${text})`,
        );
      },
      async delete(key) {
        return (
          stored(
            `delete ${key}`,
            () => sql.all`DELETE FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key = ${key} RETURNING key`,
          ).length > 0
        );
      },
      async list(prefix = "") {
        // Range scan on the primary key: key >= prefix AND key < prefix + U+FFFF.
        return stored(
          `list ${prefix}*`,
          () =>
            sql.all<
              Pick<StateRow, "key" | "value">
            >`SELECT key, value FROM state WHERE scope = ${scope} AND scope_id = ${scopeId} AND namespace = ${namespace} AND key >= ${prefix} AND key < ${pastPrefix(prefix)} ORDER BY key`,
        ).map((r): [string, unknown] => [r.key, parse(r.value)]);
      },
    };
  }

  async clear(scope: Scope, scopeId: string, opts: { prefix?: boolean } = {}): Promise<void> {
    if (opts.prefix)
      stored(
        `clear ${scope} ${scopeId}*`,
        () => this.sql.run`DELETE FROM state WHERE scope = ${scope} AND scope_id >= ${scopeId} AND scope_id < ${pastPrefix(scopeId)}`,
      );
    else stored(`clear ${scope} ${scopeId}`, () => this.sql.run`DELETE FROM state WHERE scope = ${scope} AND scope_id = ${scopeId}`);
  }
}

/**
 * An upper bound for "starts with `prefix`" in SQLite's byte order (UTF-8): `prefix` then
 * U+10FFFF, the last code point, so a key whose next character lies past U+FFFF (an emoji
 * in a file name) is still inside. Only a key continuing with U+10FFFF itself, a
 * noncharacter, would fall outside.
 */
const pastPrefix = (prefix: string) => `${prefix}\u{10FFFF}`;
