import type { ToolContext } from "../../types/context";
import { ToolError } from "../../errors";
import type { ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/** Shows only the tools `keep` accepts, and refuses calls to the others. */
export class Filtered extends WrapperToolset {
  constructor(
    inner: Toolset,
    private readonly keep: (tool: ToolDef) => boolean,
  ) {
    super(inner);
  }

  override async listTools(): Promise<ToolDef[]> {
    return (await this.inner.listTools()).filter(this.keep);
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const def = (await this.inner.listTools()).find((t) => t.name === name);
    if (!def || !this.keep(def)) throw new ToolError(`tool "${name}" is not available here`);
    return this.inner.callTool(name, args, ctx);
  }
}

export const filtered = (inner: Toolset, keep: (tool: ToolDef) => boolean): Toolset => new Filtered(inner, keep);

/** The `readonly: true` instance option: only tools that change nothing. */
export const readOnly = (inner: Toolset) => filtered(inner, (t) => t.readOnly);
