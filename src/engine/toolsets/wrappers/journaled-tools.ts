import type { Journal } from "../../journal/journal";
import type { ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

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
export class JournaledTools extends WrapperToolset {
  private list: Promise<ToolDef[]> | undefined;

  constructor(
    inner: Toolset,
    private readonly journal: Journal,
    private readonly key: string,
  ) {
    super(inner);
  }

  override listTools(): Promise<ToolDef[]> {
    return (this.list ??= this.journal.step(this.key, () => this.record()).then((l) => l.map(toolDefOf)));
  }

  private async record(): Promise<ToolData[]> {
    return (await this.inner.listTools()).map(({ name, description, parameters, readOnly }) => ({ name, description, parameters, readOnly }));
  }
}

export const journaledTools = (inner: Toolset, journal: Journal, key: string): Toolset => new JournaledTools(inner, journal, key);
