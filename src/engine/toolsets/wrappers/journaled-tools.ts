import type { Journal } from "../../journal/journal";
import type { ToolDef, Toolset } from "../../types/toolset";

/** A tool as plain data: what a kind whose tools come from elsewhere lists, and what the journal keeps. */
export interface ToolData {
  name: string;
  description: string;
  parameters: ToolDef["parameters"];
  readOnly: boolean;
}

/** Such a tool takes the default policy: read-only tools allow, the others ask. */
export const toolDefOf = (d: ToolData): ToolDef => ({ ...d, approval: () => (d.readOnly ? "allow" : "ask") });

/**
 * For kinds that list their tools at run time (an MCP server): the list one call
 * sees is a journal step under `key`, so a replay offers the model the same tools
 * (with the same approval defaults) even if the source changed meanwhile.
 */
export function journaledTools(inner: Toolset, journal: Journal, key: string): Toolset {
  let list: Promise<ToolDef[]> | undefined;
  const record = async (): Promise<ToolData[]> =>
    (await inner.listTools()).map(({ name, description, parameters, readOnly }) => ({ name, description, parameters, readOnly }));
  return {
    id: inner.id,
    listTools: () => (list ??= journal.step(key, record).then((l) => l.map(toolDefOf))),
    callTool: (name, args, ctx) => inner.callTool(name, args, ctx),
    close: inner.close && (() => inner.close!()),
  };
}
