import type { Catalog } from "../types/catalog";
import type { CallDescription } from "../types/toolset";

/**
 * How a person reads a call of `tool` (an exposed name, maybe prefixed) made by
 * `worker`: its kind's `describe`, found through the worker's instances the way
 * the prefixer names them. Undefined when the kind describes nothing (or the worker
 * or tool is gone); the page then shows the raw arguments only.
 */
export function describeCall(catalog: Catalog, worker: string, tool: string, args: unknown): CallDescription | undefined {
  const w = catalog.get(worker);
  for (const [name, spec] of Object.entries(w?.toolsets ?? {})) {
    const kind = catalog.kinds.get(spec.use);
    if (!kind) continue;
    const bare = name === kind.kind ? tool : tool.startsWith(`${name}_`) ? tool.slice(name.length + 1) : undefined;
    const def = bare === undefined ? undefined : kind.definitions.find((d) => d.name === bare);
    if (def?.describe) return def.describe(args);
  }
  return undefined;
}
