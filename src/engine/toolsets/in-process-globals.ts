import { instanceInit } from "./instances";
import { ConnectionSlots } from "../net/connection-slots";
import type { GlobalToolsets } from "../types/ports";
import type { Toolset } from "../types/toolset";
import type { StateBackend } from "../types/state";

/** Global-scoped instances held in this process, shared by every run that uses it. */
export function inProcessGlobals(states: StateBackend): GlobalToolsets {
  const instances = new Map<string, Promise<Toolset>>();
  const connections = new ConnectionSlots();
  return {
    resolve(key, name, kind, spec) {
      let ts = instances.get(key);
      if (!ts) {
        ts = kind.instantiate(key, spec.config, instanceInit(states, "global", "global", name, key, connections));
        instances.set(key, ts);
      }
      return ts;
    },
  };
}
