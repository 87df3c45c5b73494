import { recordedCreation } from "../../run/created-workers";
import { creationKey } from "../../journal/keys";
import type { RunServices } from "../../run/services";
import type { Toolset } from "../../types/toolset";

/**
 * After a `worker_create` call succeeded — run now, or replayed from the journal —
 * the creator call at `creatorPath` lists the created worker as a tool. Outside the
 * journal wrapper, so a replayed creation shows its worker at the same point.
 */
export function showsCreated(inner: Toolset, run: RunServices, creatorPath: string, creationTools: ReadonlySet<string>): Toolset {
  return {
    id: inner.id,
    listTools: () => inner.listTools(),
    async callTool(name, args, ctx) {
      const result = await inner.callTool(name, args, ctx);
      const recorded = creationTools.has(name) ? run.journal.get(creationKey(ctx.callPath)) : undefined;
      if (recorded !== undefined) run.created.show(creatorPath, String(recordedCreation.parse(recorded).frontmatter.name));
      return result;
    },
  };
}
