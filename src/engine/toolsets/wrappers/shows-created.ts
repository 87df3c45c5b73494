import type { ToolContext } from "../../types/context";
import { recordedCreation } from "../../run/created-workers";
import { creationKey } from "../../journal/keys";
import type { RunServices } from "../../run/services";
import type { Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/**
 * After a `worker_create` call succeeded — run now, or replayed from the journal —
 * the creator call at `creatorPath` lists the created worker as a tool. Outside the
 * journal wrapper, so a replayed creation shows its worker at the same point.
 */
export class ShowsCreated extends WrapperToolset {
  constructor(
    inner: Toolset,
    private readonly run: Pick<RunServices, "journal" | "created">,
    private readonly creatorPath: string,
    private readonly creationTools: ReadonlySet<string>,
  ) {
    super(inner);
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const result = await this.inner.callTool(name, args, ctx);
    const recorded = this.creationTools.has(name) ? this.run.journal.get(creationKey(ctx.callPath)) : undefined;
    if (recorded !== undefined) this.run.created.show(this.creatorPath, String(recordedCreation.parse(recorded).frontmatter.name));
    return result;
  }
}

export const showsCreated = (inner: Toolset, run: Pick<RunServices, "journal" | "created">, creatorPath: string, creationTools: ReadonlySet<string>): Toolset =>
  new ShowsCreated(inner, run, creatorPath, creationTools);
