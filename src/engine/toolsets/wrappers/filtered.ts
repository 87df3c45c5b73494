import { ToolError } from "../../errors";
import type { ToolDef, Toolset } from "../../types/toolset";

/** Shows only the tools `keep` accepts, and refuses calls to the others. */
export function filtered(inner: Toolset, keep: (tool: ToolDef) => boolean): Toolset {
  return {
    id: inner.id,
    async listTools() {
      return (await inner.listTools()).filter(keep);
    },
    async callTool(name, args, ctx) {
      const def = (await inner.listTools()).find((t) => t.name === name);
      if (!def || !keep(def)) throw new ToolError(`tool "${name}" is not available here`);
      return inner.callTool(name, args, ctx);
    },
    close: inner.close && (() => inner.close!()),
  };
}

/** The `readonly: true` instance option: only tools that change nothing. */
export const readOnly = (inner: Toolset) => filtered(inner, (t) => t.readOnly);
