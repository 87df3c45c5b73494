import type { ToolContext } from "../../types/context";
import { ToolError } from "../../errors";
import type { ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/**
 * Exposes `read_file` as `src_read_file`; strips the prefix again when called. A
 * name without the prefix is not one of these tools: it is refused, never passed
 * through (`read_file` must not reach this instance when the model was shown another's).
 */
export class Prefixed extends WrapperToolset {
  private readonly head: string;

  constructor(inner: Toolset, prefix: string) {
    super(inner);
    this.head = `${prefix}_`;
  }

  override async listTools(): Promise<ToolDef[]> {
    return (await this.inner.listTools()).map((t) => ({ ...t, name: this.head + t.name }));
  }

  override callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    if (!name.startsWith(this.head)) return Promise.reject(new ToolError(`unknown tool "${name}": this instance's tools are named ${this.head}…`));
    return this.inner.callTool(name.slice(this.head.length), args, ctx);
  }
}

export const prefixed = (inner: Toolset, prefix: string): Toolset => new Prefixed(inner, prefix);
