import { ToolError } from "../errors";
import type { ToolDef, Toolset } from "./toolset";

/**
 * Several toolsets as one, each with a label for messages; a tool name offered
 * twice is refused, naming both sources.
 */
export function combined(id: string, members: Array<[label: string, toolset: Toolset]>): Toolset {
  // Listed once, and again when asked to list (a member's list may grow: created workers).
  let routes: Promise<Map<string, { def: ToolDef; from: Toolset; label: string }>> | undefined;
  const list = () =>
    (routes = (async () => {
      const map = new Map<string, { def: ToolDef; from: Toolset; label: string }>();
      for (const [label, from] of members) {
        for (const def of await from.listTools()) {
          const seen = map.get(def.name);
          if (seen) throw new Error(`tool "${def.name}" is exposed by both ${seen.label} and ${label}`);
          map.set(def.name, { def, from, label });
        }
      }
      return map;
    })());
  const route = () => routes ?? list();
  return {
    id,
    listTools: async () => [...(await list()).values()].map((r) => r.def),
    async callTool(name, args, ctx) {
      const r = (await route()).get(name);
      if (!r) throw new ToolError(`unknown tool "${name}"; available: ${[...(await route()).keys()].join(", ") || "(none)"}`);
      return r.from.callTool(name, args, ctx);
    },
  };
}
