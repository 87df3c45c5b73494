/**
 * Counts a Durable Object's requests to other objects, by binding and object name (e.g.
 * `RUN_INDEX index/3`): the env it is built with has every object namespace wrapped, so each RPC call
 * through a stub it hands out is counted before it is made. What the scale benchmark and the
 * hot-path tests read (TestRunDO `outboundRequests`).
 */

export type Counts = Map<string, number>;

const isNamespace = (v: unknown): v is DurableObjectNamespace =>
  typeof v === "object" && v !== null && typeof (v as { getByName?: unknown }).getByName === "function";

function countedStub<T extends object>(stub: T, label: string, counts: Counts): T {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function" || typeof prop !== "string" || prop === "then") return value;
      return (...args: unknown[]) => {
        counts.set(label, (counts.get(label) ?? 0) + 1);
        // Called on the stub again (an RPC property is callable but no Function: it has no `apply`).
        return (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args);
      };
    },
  });
}

function countedNamespace(binding: string, ns: DurableObjectNamespace, counts: Counts): DurableObjectNamespace {
  return new Proxy(ns, {
    get(target, prop) {
      if (prop === "getByName") return (name: string) => countedStub(target.getByName(name), `${binding} ${name}`, counts);
      if (prop === "get") return (id: DurableObjectId) => countedStub(target.get(id), `${binding} ${id.name ?? id.toString()}`, counts);
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `env` with every object namespace counted into `counts`. */
export function countingEnv(env: Env, counts: Counts): Env {
  const wrapped: Record<string, unknown> = { ...env };
  for (const [k, v] of Object.entries(env)) if (isNamespace(v)) wrapped[k] = countedNamespace(k, v, counts);
  return wrapped as unknown as Env;
}
