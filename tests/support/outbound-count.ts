/**
 * Counts a Durable Object's requests to other objects, by binding and object name (e.g.
 * `RUN_INDEX index/3`): the env it is built with has every object namespace wrapped, so each RPC call
 * through a stub it hands out is counted before it is made. What the scale benchmark and the
 * hot-path tests read (TestRunDO `outboundRequests`).
 */

export type Counts = Map<string, number>;

/**
 * The app's Durable Object namespaces (wrangler.toml), named: a service or email binding answers any
 * property with an RPC function, so none can be told from a namespace by its shape.
 */
const NAMESPACES = new Set<string>([
  "RUNS",
  "GLOBAL_TOOLSETS",
  "RUN_INDEX",
  "DELIVERIES",
  "ENDED_SESSIONS",
  "WAIT_INDEX",
  "FLOW_KEYS",
  "OPERATIONS",
  "SCHEDULES",
  "SCHEDULE_INDEX",
] satisfies (keyof Env)[]);

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

/**
 * `env` with every object namespace counted into `counts`: a view of the same object, never a copy (tests
 * change vars on it while objects run, and the objects must see them).
 */
export function countingEnv(env: Env, counts: Counts): Env {
  const wrapped = new Map<string, DurableObjectNamespace>();
  return new Proxy(env, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== "string" || !NAMESPACES.has(prop) || !value) return value;
      if (!wrapped.has(prop)) wrapped.set(prop, countedNamespace(prop, value as DurableObjectNamespace, counts));
      return wrapped.get(prop);
    },
  });
}
