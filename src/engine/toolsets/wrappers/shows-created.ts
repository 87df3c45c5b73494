import type { ToolContext } from "../../types/context";
import { recordedCreation, type CreatedWorkers } from "../../run/created-workers";
import type { Journal } from "../../journal/journal";
import { creationKey } from "../../journal/keys";
import type { Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/** Where a creator call's creations are read (the journal) and shown (the run's created workers). */
export interface CreatorCall {
  readonly journal: Pick<Journal, "get">;
  readonly created: Pick<CreatedWorkers, "show">;
  /** The creator call's journal path. */
  readonly path: string;
  /** Its tools that create a worker (as the call lists them, prefixed). */
  readonly tools: ReadonlySet<string>;
}

/**
 * After a `worker_create` call succeeded — run now, or replayed from the journal —
 * the creator call at `creator.path` lists the created worker as a tool. Outside the
 * journal wrapper, so a replayed creation shows its worker at the same point.
 */
export class ShowsCreated extends WrapperToolset {
  constructor(
    inner: Toolset,
    private readonly creator: CreatorCall,
  ) {
    super(inner);
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const result = await this.inner.callTool(name, args, ctx);
    const { journal, created, path, tools } = this.creator;
    const recorded = tools.has(name) ? journal.get(creationKey(ctx.callPath)) : undefined;
    if (recorded !== undefined) created.show(path, String(recordedCreation.parse(recorded).frontmatter.name));
    return result;
  }
}

export const showsCreated = (inner: Toolset, creator: CreatorCall): Toolset => new ShowsCreated(inner, creator);
