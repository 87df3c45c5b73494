import { ToolError } from "../errors";
import { LatestListing } from "./latest-listing";
import type { ToolDef, Toolset } from "../types/toolset";

type Routes = Map<string, { def: ToolDef; from: Toolset; label: string }>;

/**
 * Several toolsets as one, each with a label for messages; a tool name offered
 * twice is refused, naming both sources. Not a wrapper, and without `close`: its
 * members include run- and global-scoped instances that outlive the call, so the
 * call closes only what it owns (`closeAll` in instances.ts).
 */
export function combined(id: string, members: Array<[label: string, toolset: Toolset]>): Toolset {
  // Listed once, and again when asked to list (a member's list may grow: created workers).
  const routes = new LatestListing(async () => {
    const map: Routes = new Map();
    for (const [label, from] of members) {
      for (const def of await from.listTools()) {
        const seen = map.get(def.name);
        if (seen) throw new Error(`tool "${def.name}" is exposed by both ${seen.label} and ${label}`);
        map.set(def.name, { def, from, label });
      }
    }
    return map;
  });
  const routed: Toolset["callTool"] = async (name, args, ctx) => {
    const map = await routes.get();
    const r = map.get(name);
    if (!r) throw new ToolError(`unknown tool "${name}"; available: ${[...map.keys()].join(", ") || "(none)"}`);
    return r.from.callTool(name, args, ctx);
  };
  return {
    id,
    listTools: async () => [...(await routes.refresh()).values()].map((r) => r.def),
    callTool(name, args, ctx) {
      // Listed and known (almost every call): straight to its toolset, no frame of ours in between.
      const r = routes.current?.get(name);
      return r ? r.from.callTool(name, args, ctx) : routed(name, args, ctx);
    },
  };
}
