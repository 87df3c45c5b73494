import type { ToolContext } from "../../types/context";
import type { ToolDef, Toolset } from "../../types/toolset";

/**
 * The base of every wrapper: the inner toolset's id, listing, calls and close,
 * forwarded. A wrapper extends it and overrides the one method its idea is about
 * (pydantic-ai's `WrapperToolset`), so nothing it does not mean to change is lost.
 */
export class WrapperToolset implements Toolset {
  readonly id: string;

  constructor(protected readonly inner: Toolset) {
    this.id = inner.id;
  }

  listTools(): Promise<ToolDef[]> {
    return this.inner.listTools();
  }

  callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    return this.inner.callTool(name, args, ctx);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
