import { ToolError } from "../errors";
import type { ToolDef, Toolset } from "./toolset";

type Routes = Map<string, { def: ToolDef; from: Toolset; label: string }>;

/**
 * Several toolsets as one, each with a label for messages; a tool name offered
 * twice is refused, naming both sources.
 */
export function combined(id: string, members: Array<[label: string, toolset: Toolset]>): Toolset {
  // Listed once, and again when asked to list (a member's list may grow: created workers).
  // `routes` is the last listing once it is in, looked up without waiting; `listing` the one under way.
  let routes: Routes | undefined;
  let listing: Promise<Routes> | undefined;
  const collect = async () => {
    const map: Routes = new Map();
    for (const [label, from] of members) {
      for (const def of await from.listTools()) {
        const seen = map.get(def.name);
        if (seen) throw new Error(`tool "${def.name}" is exposed by both ${seen.label} and ${label}`);
        map.set(def.name, { def, from, label });
      }
    }
    return map;
  };
  const list = () => {
    routes = undefined;
    const p = (listing = collect().then((map) => {
      if (listing === p) routes = map;
      return map;
    }));
    return p;
  };
  const routed: Toolset["callTool"] = async (name, args, ctx) => {
    const map = routes ?? (await (listing ?? list()));
    const r = map.get(name);
    if (!r) throw new ToolError(`unknown tool "${name}"; available: ${[...map.keys()].join(", ") || "(none)"}`);
    return r.from.callTool(name, args, ctx);
  };
  return {
    id,
    listTools: async () => [...(await list()).values()].map((r) => r.def),
    callTool(name, args, ctx) {
      // Listed and known (almost every call): straight to its toolset, no frame of ours in between.
      const r = routes?.get(name);
      return r ? r.from.callTool(name, args, ctx) : routed(name, args, ctx);
    },
  };
}
