import type { Scope, StateBackend, StateKV } from "../types/state";

/** State in a Map: for the engine's own tests and in-process runs. */
export class MemoryStateBackend implements StateBackend {
  /** `scope|scopeId|namespace|key` → value (JSON text, as a real store keeps it). */
  readonly rows = new Map<string, string>();

  open(scope: Scope, scopeId: string, namespace: string): StateKV {
    const base = `${scope}|${scopeId}|${namespace}|`;
    const rows = this.rows;
    return {
      async get(key) {
        const v = rows.get(base + key);
        return v === undefined ? undefined : JSON.parse(v);
      },
      async put(key, value) {
        rows.set(base + key, JSON.stringify(value ?? null));
      },
      async delete(key) {
        return rows.delete(base + key);
      },
      async list(prefix = "") {
        return [...rows.entries()]
          .filter(([k]) => k.startsWith(base + prefix))
          .map(([k, v]): [string, unknown] => [k.slice(base.length), JSON.parse(v)])
          .sort(([a], [b]) => (a < b ? -1 : 1));
      },
    };
  }

  async clear(scope: Scope, scopeId: string, opts: { prefix?: boolean } = {}): Promise<void> {
    const head = `${scope}|${scopeId}`;
    for (const k of [...this.rows.keys()]) {
      if (opts.prefix ? k.startsWith(head) : k.startsWith(`${head}|`)) this.rows.delete(k);
    }
  }
}
